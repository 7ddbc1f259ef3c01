//! The identity of a build ([`build_key`]): what the publish service
//! deduplicates builds by.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::manifest::Workflow;
use crate::target::Target;

/// The identity of a build: the CIDv1 (raw, blake3, base32) of the
/// canonical JSON of `{manifest, targets, operations, toolchain}`: the
/// manifest canonicalized (key order and white space do not matter), the
/// target names sorted without repeats, each operation's version id by
/// name, and `toolchain`, which names whatever else makes the output
/// differ (Braid's and the compiler's versions). Two builds with the same
/// key give the same artifacts, so the publish service builds a key once.
/// Not the workflow id ([`Workflow::id`], the manifest's CID alone): one
/// workflow has a build per set of targets and toolchain.
pub fn build_key(workflow: &Workflow, targets: &[Target], toolchain: &str) -> String {
    // Fields in key order, the manifest as the canonical text validation
    // made (not canonicalised again), the rest maps and strings that
    // serde_json writes canonically: the canonical JSON of the whole.
    #[derive(Serialize)]
    struct BuildKey<'a> {
        manifest: &'a RawValue,
        operations: BTreeMap<String, String>,
        targets: Vec<Target>,
        toolchain: &'a str,
    }
    let mut targets = targets.to_vec();
    targets.sort();
    targets.dedup();
    let operations = workflow.crate_versions();
    let manifest: &RawValue =
        serde_json::from_str(&workflow.canonical).expect("a workflow's canonical manifest is JSON");
    let key =
        serde_json::to_string(&BuildKey { manifest, operations, targets, toolchain }).expect("a build key serializes");
    crate::content_id(key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::validate;
    use crate::registry::Registry;
    use crate::target::JsTarget;

    const CID: &str = r#"{"name":"k","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}]}]}"#;

    fn workflow(text: &str) -> Workflow {
        validate(text, &Registry::builtin()).expect("a valid manifest")
    }

    #[test]
    fn the_build_key_is_the_manifest_targets_operations_and_toolchain() {
        let wf = workflow(CID);
        let key = build_key(&wf, &[Target::Native, Target::Js(JsTarget::Node)], "t1");
        assert!(key.starts_with("bafkr4i") && key.len() == 59, "{key}");
        assert_ne!(key, wf.id, "a build key is not the workflow id");
        // Key order, white space and target order do not matter.
        let reordered = r#"{ "segments": [{"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}],"inputs":[-1]}],
            "version": "0.1.0", "name": "k" }"#;
        let same = [Target::Js(JsTarget::Node), Target::Native, Target::Native];
        assert_eq!(build_key(&workflow(reordered), &same, "t1"), key);
        // Anything else does.
        assert_ne!(build_key(&wf, &[Target::Native], "t1"), key);
        assert_ne!(build_key(&wf, &[Target::Native, Target::Js(JsTarget::Node)], "t2"), key);
        let other = workflow(&CID.replace("\"k\"", "\"k2\""));
        assert_ne!(build_key(&other, &[Target::Native, Target::Js(JsTarget::Node)], "t1"), key);
    }

    /// Made from the canonical manifest without canonicalising again, the
    /// key is still the CID of the canonical JSON of the whole: build ids
    /// stay what they were.
    #[test]
    fn the_build_key_is_the_cid_of_canonical_json() {
        let wf = workflow(
            r#"{"version":"0.1.0","name":"k","description":"<\u00e9\"\n>","segments":[{"inputs":[-1],"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}]}]}"#,
        );
        let targets = [Target::Js(JsTarget::Web), Target::Native];
        let whole = serde_json::json!({
            "toolchain": "t\"1",
            "targets": ["native", "web"],
            "operations": wf.crates.iter().map(|op| (op.name(), op.version_id.as_str())).collect::<BTreeMap<_, _>>(),
            "manifest": serde_json::to_value(&wf.manifest).unwrap(),
        });
        let expected = crate::content_id(braid_schema::json::canonical(&whole).as_bytes());
        assert_eq!(build_key(&wf, &targets, "t\"1"), expected);
    }

    /// A build given the versions its key names (`braid build
    /// --operations`, as the service does) resolves to them again, and to
    /// the same key, though a newer version was registered since.
    #[test]
    fn a_build_of_the_versions_its_key_names_resolves_to_them() {
        use crate::registry::{prepare, Origin};
        let home = std::env::temp_dir().join(format!("braid-key-{}", uuid::Uuid::new_v4().simple()));
        let mut registry = Registry::open(&home).unwrap();
        let manifest =
            r#"{"name":"o","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_utf8"}]}]}"#;
        let submitted = validate(manifest, &registry).unwrap();
        let key = build_key(&submitted, &[Target::Native], "t1");
        let mut files = registry.get("op_utf8").unwrap().files().unwrap().into_owned();
        let toml = files["Cargo.toml"].replace("version = \"0.1.0\"", "version = \"0.1.1\"");
        files.insert("Cargo.toml".into(), toml);
        files.remove("manifest.json");
        registry.add(prepare(files, "op_utf8").unwrap(), Origin::Added).unwrap();
        let newest = validate(manifest, &registry).unwrap();
        assert_ne!(build_key(&newest, &[Target::Native], "t1"), key, "resolved again, it is another build");
        let ids: Vec<String> = submitted.crate_versions().into_values().collect();
        let pinned = validate(manifest, &Registry::open(&home).unwrap().pin(&ids).unwrap()).unwrap();
        assert_eq!(build_key(&pinned, &[Target::Native], "t1"), key);
        std::fs::remove_dir_all(&home).unwrap();
    }
}
