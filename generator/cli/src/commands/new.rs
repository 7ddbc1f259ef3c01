//! `braid new op NAME -o DIR`: scaffolds an operation crate.

use std::path::PathBuf;

use braid::scaffold;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// An operation crate: `Bytes -> Bytes`, with a test and a README saying how to write, test, add and
    /// publish it.
    Op {
        /// The crate's name, e.g. op_resize.
        name: String,
        /// A new or empty directory.
        #[arg(short, long)]
        out: PathBuf,
    },
}

pub fn run(Args { what }: Args) -> anyhow::Result<()> {
    let What::Op { name, out } = what;
    let home = braid::registry::default_home();
    scaffold::new_operation(&name, &out, &home)?;
    eprintln!(
        "wrote operation crate {name} to {dir}\n  test it:  cd {dir} && cargo test\n  add it:   braid ops add {dir}\n  \
         depend on a registered crate (op_x = \"0.1\" in Cargo.toml)? then: braid ops deps {dir}",
        dir = out.display()
    );
    Ok(())
}
