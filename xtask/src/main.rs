//! `cargo xtask`: the repository's own checks (`cargo xtask modules`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use xtask::{check_modules, MAX_LINES, SIZED};

fn main() -> Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["modules"] => {
            let root = workspace_root();
            let problems = check_modules(&root)?;
            for problem in &problems {
                eprintln!("{problem}");
            }
            if problems.is_empty() {
                println!("modules: no import cycles; no file over {MAX_LINES} lines in {}", SIZED.join(", "));
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("modules: {} problem(s)", problems.len());
                Ok(ExitCode::FAILURE)
            }
        }
        _ => {
            eprintln!("usage: cargo xtask modules    import cycles between modules, files over {MAX_LINES} lines");
            Ok(ExitCode::from(2))
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}
