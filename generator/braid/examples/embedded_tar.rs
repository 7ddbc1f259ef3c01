//! Writes `embedded.tar`, the files this braid embeds (templates, runtime
//! crates, built-in operations, the workspace's `Cargo.toml` and
//! `Cargo.lock`), to the path given: what `cargo xtask package` puts in
//! braid's package for its `build.rs`, which cannot read the workspace there.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: embedded_tar OUT.tar");
        return ExitCode::from(2);
    };
    match std::fs::write(&path, braid::sources::packed()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("writing {}: {e}", std::path::Path::new(&path).display());
            ExitCode::FAILURE
        }
    }
}
