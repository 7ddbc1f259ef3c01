//! `braid cache` (where builds are cached and how much room they take) and
//! `braid clean` (removes them; the next build starts cold).

use std::path::PathBuf;

use braid::build;

#[derive(clap::Args)]
pub struct Args {
    /// Cargo target directory (default: $BRAID_TARGET_DIR or ~/.cache/braid/target).
    #[arg(long)]
    target_dir: Option<PathBuf>,
}

fn dirs(args: &Args) -> Vec<PathBuf> {
    build::cache_dirs(&args.target_dir.clone().unwrap_or_else(build::default_target_dir))
}

/// Bytes as MiB, for people.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

pub fn show(args: Args) -> anyhow::Result<()> {
    let mut total = 0;
    for dir in dirs(&args) {
        let used = build::disk_usage(&dir)?;
        total += used;
        println!("{:>12}  {}", mib(used), dir.display());
    }
    println!("{:>12}  in all; `braid clean` removes it", mib(total));
    Ok(())
}

pub fn clean(args: Args) -> anyhow::Result<()> {
    let mut freed = 0;
    for dir in dirs(&args) {
        if dir.exists() {
            freed += build::disk_usage(&dir)?;
            std::fs::remove_dir_all(&dir).map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", dir.display()))?;
            eprintln!("removed {}", dir.display());
        }
    }
    eprintln!("freed {}", mib(freed));
    Ok(())
}
