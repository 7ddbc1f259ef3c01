//! `braid build`: generates and builds a workflow for its targets, showing
//! progress (a bar on a terminal, plain lines otherwise).

use std::path::PathBuf;

use braid::build::{self, Target};
use braid::codegen::Generator;
use braid::registry::Registry;
use braid::vendor::Sources;

use crate::output::load;

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    #[arg(short, long)]
    out: PathBuf,
    /// Comma-separated: native, nostd, node, web, bundler (default: every target the operations allow).
    #[arg(long, value_delimiter = ',', value_parser = parse_target)]
    targets: Vec<Target>,
    /// Cargo target directory shared between builds (default: $BRAID_TARGET_DIR or ~/.cache/braid/target).
    #[arg(long)]
    target_dir: Option<PathBuf>,
}

fn parse_target(name: &str) -> Result<Target, String> {
    Target::parse(name).ok_or_else(|| format!("unknown target `{name}`; expected native, nostd, node, web or bundler"))
}

pub fn run(Args { manifest, out, targets, target_dir }: Args) -> anyhow::Result<()> {
    let workflow = load(&manifest, &Registry::builtin())?;
    let sources = Sources::locate(None)?;
    let options = build::Options {
        targets: if targets.is_empty() { build::default_targets(&workflow) } else { targets },
        target_dir: target_dir.unwrap_or_else(build::default_target_dir),
        tool_dirs: vec![sources.root().join("js/node_modules/.bin")],
        deny_warnings: std::env::var_os("BRAID_DENY_WARNINGS").is_some_and(|v| v == "1"),
    };
    let mut progress = Progress::new();
    let report = build::build(&workflow, &Generator::new(), &sources, &out, &options, &mut |e| progress.event(e));
    progress.finish();
    let report = report?;
    eprintln!(
        "built {} for {} in {} ms; report: {}",
        report.crate_name,
        report.targets.join(", "),
        report.timings_ms.values().sum::<u64>(),
        out.join("report.json").display()
    );
    Ok(())
}

/// Build progress: a bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new() -> Self {
        use std::io::IsTerminal as _;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(1);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        Self { bar }
    }

    fn event(&mut self, event: build::Event<'_>) {
        match (&self.bar, event) {
            (Some(bar), build::Event::Start { index, total, step }) => {
                bar.set_length(total as u64);
                bar.set_position(index as u64 - 1);
                bar.set_message(format!("building {step}"));
            }
            (Some(bar), build::Event::Done { step, ms }) => {
                bar.inc(1);
                bar.println(format!("  {step:<8} {ms:>6} ms"));
            }
            (None, build::Event::Start { index, total, step }) => eprintln!("[{index}/{total}] {step}"),
            (None, build::Event::Done { step, ms }) => eprintln!("      {step} done in {ms} ms"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
