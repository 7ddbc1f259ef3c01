//! `braid run`: builds a workflow natively (cached) and runs it on files.

use std::path::PathBuf;

use braid::build;
use braid::codegen::Generator;
use braid::runner;

use crate::output::{emit, load, registry};

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    /// A file per external input, in order, or `NAME=FILE` for an input the manifest names: its bytes
    /// (Bytes, Multihash) or its text (String, Cid, U64, Bool); `-` reads standard input (streamed
    /// when the workflow can stream). Exit status 3 when the workflow itself fails, 2 when an input
    /// cannot be read.
    #[arg(long = "input", value_name = "[NAME=]FILE")]
    inputs: Vec<PathBuf>,
    /// Print how long the workflow took (on stderr).
    #[arg(long)]
    time: bool,
    #[arg(long)]
    target_dir: Option<PathBuf>,
}

pub fn run(Args { manifest, inputs, time, target_dir }: Args) -> anyhow::Result<()> {
    let workflow = load(&manifest, &registry()?)?;
    let target_dir = target_dir.unwrap_or_else(build::default_target_dir);
    let output = runner::run(&workflow, &Generator::new(), &target_dir, &inputs, time)?;
    emit(&output.stdout)?;
    eprint!("{}", output.stderr);
    Ok(())
}
