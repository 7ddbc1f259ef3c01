//! `braid ops`: lists the operations in the registry.

use braid::join;
use braid::registry::Registry;
use braid::schema::Platform;

use crate::output::emit;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON (an array of {name, version, version_id, manifest}).
    #[arg(long, conflicts_with = "names")]
    json: bool,
    /// Print only the names, one per line.
    #[arg(long)]
    names: bool,
    /// Only operations that run on this target: native, nostd or wasm.
    #[arg(long)]
    supports: Option<Platform>,
}

pub fn run(Args { json, names, supports }: Args) -> anyhow::Result<()> {
    let registry = Registry::builtin();
    let selected: Vec<_> = registry.iter().filter(|op| supports.is_none_or(|p| op.manifest.supports(p))).collect();
    let mut out = String::new();
    if names {
        for op in &selected {
            out.push_str(op.info.name);
            out.push('\n');
        }
    } else if json {
        let list: Vec<serde_json::Value> = selected
            .iter()
            .map(|op| {
                serde_json::json!({
                    "name": op.info.name,
                    "version": op.info.version,
                    "version_id": op.version_id,
                    "manifest": op.manifest,
                })
            })
            .collect();
        out = serde_json::to_string_pretty(&list)? + "\n";
    } else {
        for op in &selected {
            let m = &op.manifest;
            let dots = if op.info.flow_control { "..." } else { "" };
            let sig = format!("{}{dots} -> {}", join(&m.inputs, ", "), m.output);
            let targets = format!("[{}]", join(&m.targets, ","));
            out.push_str(&format!("{:<14} {:<8} {:<26} {:<20} {}\n", m.name, m.version, sig, targets, op.version_id));
        }
    }
    Ok(emit(&out)?)
}
