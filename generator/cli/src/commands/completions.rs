//! `braid completions SHELL`: the completion script clap_complete writes
//! from the command's own definition, so it never falls behind it.

#[derive(clap::Args)]
pub struct Args {
    /// bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

pub fn run<C: clap::CommandFactory>(Args { shell }: Args) -> anyhow::Result<()> {
    clap_complete::generate(shell, &mut C::command(), "braid", &mut std::io::stdout());
    Ok(())
}
