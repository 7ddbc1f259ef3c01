//! `braid generate`: writes the generated crate of a manifest.

use std::path::PathBuf;

use braid::codegen::{self, Generator};
use braid::project;
use braid::registry::Registry;
use braid::vendor::Sources;

use crate::output::load;

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    #[arg(short, long)]
    out: PathBuf,
}

pub fn run(Args { manifest, out }: Args) -> anyhow::Result<()> {
    let workflow = load(&manifest, &Registry::builtin())?;
    let sources = Sources::locate(None)?;
    let files = project::write(&workflow, &Generator::new(), &sources, &out)?;
    eprintln!(
        "wrote {} files of crate {} to {}",
        files.len() + 1,
        codegen::crate_name(&workflow.manifest.name),
        out.display()
    );
    Ok(())
}
