//! The operation manifest built from the crate and the signature, as
//! canonical JSON: keys sorted, no whitespace, serde_json's escaping. Its
//! blake3 CIDv1 is the operation's version id, so this form must not change
//! without bumping operation versions.

use serde_json::{json, Map, Value};

use crate::{args::Args, crate_info::CrateInfo, signature::Signature};

pub fn build(info: &CrateInfo, args: &Args, sig: &Signature) -> Result<Value, String> {
    let description = match &args.description {
        Some(d) => d.value(),
        None if !info.description.trim().is_empty() => info.description.clone(),
        None => return Err("add a `description = \"...\"` argument or a package description in Cargo.toml".into()),
    };
    let mut groups: Vec<String> = args.groups.iter().map(|g| g.value()).collect();
    if sig.flow_control {
        groups.push("FLOWCONTROL".into());
    }
    groups.sort();
    let config: Map<String, Value> = args
        .config
        .iter()
        .map(|c| (c.key.to_string(), Value::from(c.allowed.iter().map(|v| v.value()).collect::<Vec<_>>())))
        .collect();
    Ok(json!({
        "name": info.name,
        "version": info.version,
        "description": description,
        "inputs": sig.inputs.iter().map(|i| i.name.to_string()).collect::<Vec<_>>(),
        "output": sig.output.to_string(),
        "config": config,
        "groups": groups,
        "features": info.features,
        "targets": info.targets(),
        "repository": info.repository,
        "license": info.license,
    }))
}

/// Canonical JSON text (see `braid_support::json`).
pub fn canonical(value: &Value) -> String {
    braid_support::json::canonical(value)
}
