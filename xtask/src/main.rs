//! `cargo xtask`: the repository's own checks and the Makefile's steps
//! that are more than one command (see [`USAGE`]).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use xtask::{check_modules, package, tasks, workspace_root, MAX_LINES, SIZED};

const USAGE: &str = "usage: cargo xtask TASK
  modules         import cycles between modules, files over the size limit
  nostd           the runtime and every no_std operation built for a bare-metal target
  lint-wasm       clippy of the operations' Wasm interfaces and the Wasm allocator on wasm32
  test-postgres   the shared backend's store tests against a private PostgreSQL
  test-s3         the S3 store's and the compile cache's tests against a private Garage
  package         the crates users install, packaged and verified (`cargo package`)
  package --install   the same, braid-cli installed from its package (`cargo install`) building
                  the packages it depends on, cargo package verifying the others";

/// An error is printed as one line of its causes, without the backtrace
/// anyhow captures when `RUST_BACKTRACE` is set (as in CI), which would
/// push the message itself out of a log's tail.
fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    let task = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["nostd"] => tasks::nostd,
        ["lint-wasm"] => tasks::lint_wasm,
        ["test-postgres"] => tasks::test_postgres,
        ["test-s3"] => tasks::test_s3,
        ["package"] => |root: &Path| package::package(root, false),
        ["package", "--install"] => |root: &Path| package::package(root, true),
        ["modules"] => {
            let problems = check_modules(&root)?;
            for problem in &problems {
                eprintln!("{problem}");
            }
            return if problems.is_empty() {
                println!("modules: no import cycles; no file over {MAX_LINES} lines in {}", SIZED.join(", "));
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("modules: {} problem(s)", problems.len());
                Ok(ExitCode::FAILURE)
            };
        }
        _ => {
            eprintln!("{USAGE}");
            return Ok(ExitCode::from(2));
        }
    };
    task(&root)?;
    Ok(ExitCode::SUCCESS)
}
