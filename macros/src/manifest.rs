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
        None => {
            return Err(
                "add a `description = \"...\"` argument or a package description in Cargo.toml"
                    .into(),
            )
        }
    };
    let mut groups: Vec<String> = args.groups.iter().map(|g| g.value()).collect();
    if sig.flow_control {
        groups.push("FLOWCONTROL".into());
    }
    groups.sort();
    let config: Map<String, Value> = args
        .config
        .iter()
        .map(|c| {
            (
                c.key.to_string(),
                Value::from(c.allowed.iter().map(|v| v.value()).collect::<Vec<_>>()),
            )
        })
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

/// Canonical JSON text: object keys sorted (rebuilt explicitly, so it holds
/// even if serde_json's `preserve_order` is on), no whitespace.
pub fn canonical(value: &Value) -> String {
    sorted(value).to_string()
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_sorts_keys_without_whitespace() {
        let v = json!({"b": [1, 2], "a": {"d": "x", "c": "é\"\n"}});
        assert_eq!(canonical(&v), r#"{"a":{"c":"é\"\n","d":"x"},"b":[1,2]}"#);
    }
}
