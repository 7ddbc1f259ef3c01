//! The `braid` command line: parses arguments and dispatches to one module
//! per subcommand ([`commands`]); the work itself is in the `braid`,
//! `braid-worker` and `braid-service` libraries.

mod commands;
mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc's malloc: each run of `braid serve` creates
/// and drops a Wasm store (tens of allocations) on whichever worker thread
/// took the request, which glibc serves from contended arenas.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Braid compiles workflow manifests into one fused Rust crate.
#[derive(Parser)]
#[command(name = "braid", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a workflow manifest: exit 0 if valid, 1 with diagnostics if not, 2 on usage or I/O errors.
    Validate(commands::validate::Args),
    /// Write the crate generated from a workflow manifest into DIR.
    Generate(commands::generate::Args),
    /// The operation registry: list it (`braid ops`), show one (`braid ops NAME`), `add DIR...`, `remove NAME@VERSION`.
    Ops(commands::ops::Args),
    /// Scaffold a new crate: `braid new op NAME -o DIR` writes an operation that builds and passes its test.
    New(commands::new::Args),
    /// Check what builds and `braid serve` need (cargo, rustup targets, wasm-bindgen, wasm-opt, the sandbox); --fix installs it.
    Doctor(commands::doctor::Args),
    /// Generate and build a workflow: DIR/crate, DIR/pkg/{node,web,bundler}, DIR/report.json.
    Build(commands::build::Args),
    /// Build a workflow natively (cached) and run it; each --input FILE is one external input, in order.
    Run(commands::run::Args),
    /// Run the publish service: an HTTP API that validates, generates and builds workflows.
    Serve(Box<commands::serve::Args>),
    /// Build a workflow on a service and point a deployment's name at it (`braid deploy NAME WORKFLOW.json`), or
    /// back at its previous build (`braid deploy NAME --rollback`).
    Deploy(commands::deploy::Args),
    /// Build workflows for a deployment of `braid serve` that shares its state (--database, --store), on any
    /// host; as many as the builds need.
    Worker(commands::serve::WorkerArgs),
    /// Build operations alone as npm packages (their `wasm` feature).
    OpPackage(commands::op_package::Args),
    /// Show where builds are cached (the cargo target directory, `braid run`'s crates) and their size.
    Cache(commands::cache::Args),
    /// Remove the build cache `braid cache` shows; the next build starts cold.
    Clean(commands::cache::Args),
    /// Print the JSON Schema of workflow manifests (with the registry's operations and config values),
    /// for editor completion: `braid schema > workflow.schema.json`, then `"$schema":
    /// "./workflow.schema.json"` in a manifest.
    Schema,
    /// Print a shell completion script: `braid completions bash > ~/.local/share/bash-completion/completions/braid`.
    Completions(commands::completions::Args),
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Validate(args) => commands::validate::run(args),
        Command::Generate(args) => commands::generate::run(args),
        Command::Ops(args) => commands::ops::run(args),
        Command::New(args) => commands::new::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Build(args) => commands::build::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Serve(args) => commands::serve::run(*args),
        Command::Worker(args) => commands::serve::worker(args),
        Command::Deploy(args) => commands::deploy::run(args),
        Command::OpPackage(args) => commands::op_package::run(args),
        Command::Schema => commands::schema::run(),
        Command::Cache(args) => commands::cache::show(args),
        Command::Clean(args) => commands::cache::clean(args),
        Command::Completions(args) => commands::completions::run::<Cli>(args),
    };
    // Exit statuses: 0 success; 1 an invalid manifest (its diagnostics are
    // printed); 2 usage, I/O, toolchain or build errors; 3 the workflow ran
    // and failed (`braid run`).
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<output::Invalid>() => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            let ran_and_failed = matches!(e.downcast_ref(), Some(braid::runner::RunError::Workflow { .. }));
            ExitCode::from(if ran_and_failed { 3 } else { 2 })
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// clap's own consistency checks over every subcommand and argument.
    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }
}
