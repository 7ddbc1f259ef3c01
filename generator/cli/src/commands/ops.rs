//! `braid ops`: lists the operations in the registry.

use braid::registry::Registry;

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
    #[arg(long, value_parser = ["native", "nostd", "wasm"])]
    supports: Option<String>,
}

pub fn run(Args { json, names, supports }: Args) -> anyhow::Result<()> {
    let registry = Registry::builtin();
    let selected: Vec<_> =
        registry.iter().filter(|op| supports.as_ref().is_none_or(|t| op.manifest.supports(t))).collect();
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
            let sig = format!("{}{dots} -> {}", m.inputs.join(", "), m.output);
            let targets = format!("[{}]", m.targets.join(","));
            out.push_str(&format!("{:<14} {:<8} {:<26} {:<20} {}\n", m.name, m.version, sig, targets, op.version_id));
        }
    }
    Ok(emit(&out)?)
}
