//! The operation manifest built from the crate and the signature, as
//! canonical JSON: keys sorted, no whitespace, serde_json's escaping. Its
//! blake3 CIDv1 is the operation's version id, so this form must not change
//! without bumping operation versions.

use braid_support::value_feature;
use serde_json::{json, Map, Value};

use crate::{args::Args, crate_info::CrateInfo, signature::Signature};

/// Checks that for every config key, every allowed value has its cargo
/// feature (`braid_support::value_feature`) or none has.
pub fn check_value_features(info: &CrateInfo, args: &Args) -> syn::Result<()> {
    for decl in &args.config {
        let key = decl.key.to_string();
        let (gated, missing): (Vec<&syn::LitStr>, Vec<&syn::LitStr>) =
            decl.allowed.iter().partition(|v| info.features.contains(&value_feature(&key, &v.value())));
        if let (Some(_), Some(first)) = (gated.first(), missing.first()) {
            let names: Vec<String> = missing.iter().map(|v| format!("`{}`", value_feature(&key, &v.value()))).collect();
            return Err(syn::Error::new(
                first.span(),
                format!(
                    "config `{key}` gates values behind cargo features, but Cargo.toml declares no {}; \
                     declare one feature per allowed value, or none",
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn info(features: &[&str]) -> CrateInfo {
        CrateInfo {
            name: "op".into(),
            version: "0.1.0".into(),
            description: "d".into(),
            repository: String::new(),
            license: String::new(),
            features: features.iter().map(|f| f.to_string()).collect(),
            no_std: true,
        }
    }

    fn args() -> Args {
        crate::args::parse(quote::quote!(config(hasher = ["blake3", "sha2-256"], base = ["a"]))).unwrap()
    }

    #[test]
    fn value_features_are_all_or_none() {
        assert!(check_value_features(&info(&["std"]), &args()).is_ok());
        assert!(check_value_features(&info(&["hasher-blake3", "hasher-sha2-256"]), &args()).is_ok());
        let err = check_value_features(&info(&["hasher-blake3"]), &args()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "config `hasher` gates values behind cargo features, but Cargo.toml declares no `hasher-sha2-256`; \
             declare one feature per allowed value, or none"
        );
    }
}
