//! `braid generate`: writes the generated crate of a manifest.

use std::path::PathBuf;

use crate::output::{load, registry};
use braid::codegen::{self, Generator};
use braid::project;

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    #[arg(short, long)]
    out: PathBuf,
}

pub fn run(Args { manifest, out }: Args) -> anyhow::Result<()> {
    let workflow = load(&manifest, &registry()?)?;
    let files = project::write(&workflow, &Generator::new(), &out)?;
    eprintln!(
        "wrote {} files of crate {} to {}",
        files.len() + 1,
        codegen::crate_name(&workflow.manifest.name),
        out.display()
    );
    Ok(())
}
