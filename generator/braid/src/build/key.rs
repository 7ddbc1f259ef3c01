//! The identity of a build ([`build_key`]): what the publish service
//! deduplicates builds by.

use std::collections::BTreeMap;

use serde::Serialize;

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
    #[derive(Serialize)]
    struct BuildKey<'a> {
        manifest: &'a crate::manifest::WorkflowManifest,
        targets: Vec<Target>,
        operations: BTreeMap<&'a str, &'a str>,
        toolchain: &'a str,
    }
    let mut targets = targets.to_vec();
    targets.sort();
    targets.dedup();
    let operations = workflow.crates.iter().map(|op| (op.name(), op.version_id.as_str())).collect();
    let key = serde_json::to_value(BuildKey { manifest: &workflow.manifest, targets, operations, toolchain })
        .expect("a build key serializes");
    crate::content_id(braid_schema::json::canonical(&key).as_bytes())
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
}
