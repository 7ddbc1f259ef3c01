//! The JSON Schema (draft 2020-12) of workflow manifests, for editors:
//! the shape [`super::parse`] accepts, with the registry's operations, their
//! versions, version ids and config values spelled out, so that an editor
//! completes them. `braid schema` prints it; a manifest may name it in
//! `$schema`. The schema helps while typing; `braid validate` remains the
//! judge (references between segments, types and limits across fields are
//! beyond a schema).

use serde_json::{json, Value};

use super::{MAX_OPERATIONS_PER_SEGMENT, MAX_SEGMENTS, MAX_SEGMENT_INPUTS};
use crate::registry::Registry;

/// The schema of manifests whose operations come from `registry`.
pub fn json_schema(registry: &Registry) -> Value {
    let names = registry.names();
    // Per operation: its versions, version ids and config, when it is named.
    let per_operation: Vec<Value> = names
        .iter()
        .filter_map(|name| {
            let versions = registry.versions(name);
            let newest = versions.first()?;
            let config: serde_json::Map<String, Value> = newest
                .manifest
                .config
                .iter()
                .map(|(key, values)| (key.clone(), json!({ "enum": values, "default": values.first() })))
                .collect();
            Some(json!({
                "if": { "properties": { "operation": { "const": name } }, "required": ["operation"] },
                "then": {
                    "description": newest.manifest.description,
                    "properties": {
                        "version": {
                            "examples": versions.iter().map(|op| format!("^{}", op.version())).collect::<Vec<_>>(),
                        },
                        "config": { "type": "object", "properties": config, "additionalProperties": false },
                    },
                },
            }))
        })
        .collect();
    let version_ids: Vec<Value> = registry
        .iter()
        .map(|op| json!({ "const": op.version_id, "description": format!("{} {}", op.name(), op.version()) }))
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Braid workflow manifest",
        "description": "Segments of chained operations; `braid validate` checks what a schema cannot (references, types, limits).",
        "type": "object",
        "required": ["name", "version", "segments"],
        "additionalProperties": false,
        "properties": {
            "$schema": { "type": "string", "description": "This schema (`braid schema > workflow.schema.json`); not part of the workflow." },
            "name": {
                "type": "string",
                "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,63}$",
                "description": "The generated crate is called `wf_<name>`.",
            },
            "version": { "type": "string", "description": "MAJOR.MINOR.PATCH, valid for cargo and npm.", "examples": ["0.1.0"] },
            "description": { "type": "string", "maxLength": 4096 },
            "groups": {
                "type": "array",
                "items": { "type": "string", "pattern": "^[A-Z0-9_]{1,64}$", "examples": ["SYS", "IMAGE", "FLOWCONTROL"] },
                "description": "Upper-case labels of what the workflow does; part of the manifest, read by nothing else.",
            },
            "inputs": {
                "type": "array",
                "minItems": 1,
                "maxItems": super::MAX_EXTERNAL_INPUTS,
                "uniqueItems": true,
                "items": { "type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$", "examples": ["photo", "salt"] },
                "description": "Names of the external inputs, in the order run takes them (one per -1, or those the segments name): run's parameters, TypeScript tuple labels, `braid run --input NAME=FILE`. Not Rust or JS keywords.",
            },
            "segments": { "type": "array", "minItems": 1, "maxItems": MAX_SEGMENTS, "items": { "$ref": "#/$defs/segment" } },
        },
        "$defs": {
            "segment": {
                "type": "object",
                "required": ["inputs", "sequence"],
                "additionalProperties": false,
                "properties": {
                    "inputs": {
                        "type": "array",
                        "maxItems": MAX_SEGMENT_INPUTS,
                        "items": {
                            "anyOf": [
                                { "type": "integer", "minimum": -1 },
                                { "type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$" },
                            ],
                        },
                        "description": "-1 is the next external input, n the output of an earlier segment n, a name the external input of that name (from the manifest's inputs; the same name is the same value in every segment).",
                    },
                    "sequence": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_OPERATIONS_PER_SEGMENT,
                        "items": { "$ref": "#/$defs/step" },
                    },
                },
            },
            "step": {
                "type": "object",
                "additionalProperties": false,
                "anyOf": [{ "required": ["operation"] }, { "required": ["versionId"] }],
                "properties": {
                    "operation": { "enum": names },
                    "version": { "type": "string", "description": "A semver requirement (cargo's rules); the newest version without it." },
                    "versionId": { "anyOf": version_ids },
                    "config": { "type": "object", "additionalProperties": { "type": "string" } },
                },
                "allOf": per_operation,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_operation_and_its_config_values() {
        let schema = json_schema(&Registry::builtin());
        let names = schema["$defs"]["step"]["properties"]["operation"]["enum"].as_array().unwrap();
        assert!(names.contains(&json!("op_multihash")) && names.contains(&json!("op_cid")), "{names:?}");
        let multihash = schema["$defs"]["step"]["allOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["if"]["properties"]["operation"]["const"] == "op_multihash")
            .expect("op_multihash's config");
        let hasher = &multihash["then"]["properties"]["config"]["properties"]["hasher"];
        assert!(hasher["enum"].as_array().unwrap().contains(&json!("sha2-256")), "{hasher}");
        assert_eq!(schema["properties"]["segments"]["maxItems"], MAX_SEGMENTS);
    }
}
