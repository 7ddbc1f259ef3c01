//! The schema-version guard (as wasm-bindgen-shared does it): a snapshot of
//! the operation-manifest schema, computed from the types and checks
//! themselves, is committed as `tests/schema/v<SCHEMA_VERSION>.txt`. When
//! the schema changes (a field, its JSON form, the type-name or platform
//! grammar, the canonical form and version ids, what the checks accept) the
//! snapshot differs and this test fails until `SCHEMA_VERSION` is bumped and
//! the new version is blessed with
//! `BRAID_BLESS=1 cargo test -p braid-schema --test schema_version`.
//! Blessing never overwrites a committed version: those stay as history.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use braid_schema::{
    content_id, FieldDef, FieldType, Kind, OperationManifest, Platform, TypeDef, TypeName, FLOWCONTROL, SCHEMA_VERSION,
};
use serde_json::Value;

/// A manifest with every field filled, so that every JSON shape shows.
fn sample() -> OperationManifest {
    OperationManifest {
        name: "op_sample".into(),
        kind: Kind::Operation,
        version: "1.2.3".into(),
        description: "Hashes \"bytes\"\nwith é".into(),
        inputs: vec![TypeName::Param("T".into())],
        input_names: vec!["items".into()],
        output: Some(TypeName::Vec(Box::new(TypeName::Param("T".into())))),
        borrows: true,
        stream: false,
        config: BTreeMap::from([
            ("base".into(), vec!["base32".into(), "base58btc".into()]),
            ("hasher".into(), vec!["blake3".into(), "sha2-256".into()]),
        ]),
        groups: vec![FLOWCONTROL.into(), "SYS".into()],
        features: vec!["hasher-blake3".into(), "hasher-sha2-256".into(), "std".into()],
        targets: Platform::ALL.to_vec(),
        repository: "https://example.invalid/r".into(),
        license: "MIT".into(),
        source: Some(content_id(b"the sample crate")),
        types: BTreeMap::from([
            (
                "Image".into(),
                TypeDef::Record(vec![
                    FieldDef { name: "width".into(), ty: FieldType::Number },
                    FieldDef { name: "pixels".into(), ty: FieldType::Bytes },
                    FieldDef { name: "filter".into(), ty: FieldType::parse("Option<op_sample::Filter>").unwrap() },
                    FieldDef { name: "tags".into(), ty: FieldType::parse("Map<Vec<BigInt>>").unwrap() },
                    FieldDef { name: "seen".into(), ty: FieldType::Bool },
                    FieldDef { name: "name".into(), ty: FieldType::String },
                ]),
            ),
            ("Filter".into(), TypeDef::Choice(vec!["nearest".into(), "catmullRom".into()])),
        ]),
    }
}

/// The JSON shape of a value: a struct's fields at the top, maps below.
fn shape(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(items) => format!("[{}]", items.first().map(shape).unwrap_or_default()),
        Value::Object(map) => format!("{{string: {}}}", map.values().next().map(shape).unwrap_or_default()),
    }
}

/// The sample made a crate of value types only.
fn types_only(v: &mut Value) {
    let map = v.as_object_mut().unwrap();
    for field in ["inputs", "input_names", "output", "borrows", "stream"] {
        map.remove(field);
    }
    map.insert("kind".into(), "types".into());
    map.insert("config".into(), serde_json::json!({}));
    map.insert("groups".into(), serde_json::json!([]));
}

/// The sample made a `Bytes -> Bytes` operation with an incremental form,
/// its output borrowed or not.
fn streaming(v: &mut Value, borrows: bool) {
    v["groups"] = serde_json::json!(["SYS"]);
    v["inputs"] = serde_json::json!(["Bytes"]);
    v["output"] = "Bytes".into();
    v["borrows"] = borrows.into();
    v["stream"] = true.into();
}

/// Edits of the sample and whether the checks accept each: what the checks
/// allow is part of the schema.
fn probes() -> Vec<(&'static str, Value)> {
    let base = serde_json::to_value(sample()).unwrap();
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        f(&mut v);
        v
    };
    vec![
        ("the sample", base.clone()),
        ("an unknown field", edit(&|v| v["extra"] = "x".into())),
        ("a missing field", edit(&|v| drop(v.as_object_mut().unwrap().remove("license")))),
        ("no inputs", edit(&|v| v["inputs"] = serde_json::json!([]))),
        (
            "no input names (a manifest from before them)",
            edit(&|v| drop(v.as_object_mut().unwrap().remove("input_names"))),
        ),
        ("two names for one input", edit(&|v| v["input_names"] = serde_json::json!(["a", "b"]))),
        ("an input name that is no identifier", edit(&|v| v["input_names"] = serde_json::json!(["Items"]))),
        ("no output", edit(&|v| drop(v.as_object_mut().unwrap().remove("output")))),
        ("a types-only crate (kind types, no inputs or output, config {})", edit(&|v| types_only(v))),
        (
            "a types-only crate with an output",
            edit(&|v| {
                types_only(v);
                v["output"] = "Bytes".into();
            }),
        ),
        (
            "a types-only crate without types",
            edit(&|v| {
                types_only(v);
                drop(v.as_object_mut().unwrap().remove("types"));
            }),
        ),
        ("an unknown kind", edit(&|v| v["kind"] = "library".into())),
        ("an owned output, written out", edit(&|v| v["borrows"] = false.into())),
        ("an incremental form on a Bytes operation", edit(&|v| streaming(v, false))),
        ("an incremental form on a generic operation", edit(&|v| v["stream"] = true.into())),
        ("an incremental form with a borrowed output", edit(&|v| streaming(v, true))),
        ("kind operation, written out", edit(&|v| v["kind"] = "operation".into())),
        ("two inputs of a FLOWCONTROL operation", edit(&|v| v["inputs"] = serde_json::json!(["T", "T"]))),
        ("a generic input without FLOWCONTROL", edit(&|v| v["groups"] = serde_json::json!(["SYS"]))),
        ("a generic output no input binds", edit(&|v| v["inputs"] = serde_json::json!(["Bytes", "Bytes"]))),
        ("a lower-case group", edit(&|v| v["groups"] = serde_json::json!(["FLOWCONTROL", "sys"]))),
        ("a group twice", edit(&|v| v["groups"] = serde_json::json!(["FLOWCONTROL", "SYS", "SYS"]))),
        ("a config key with no values", edit(&|v| v["config"]["codec"] = serde_json::json!([]))),
        ("a config value twice", edit(&|v| v["config"]["base"] = serde_json::json!(["base32", "base32"]))),
        ("an empty config value", edit(&|v| v["config"]["base"] = serde_json::json!([""]))),
        ("a config key that is not an identifier", edit(&|v| v["config"]["a-b"] = serde_json::json!(["x"]))),
        ("a value without its feature", edit(&|v| v["features"] = serde_json::json!(["hasher-blake3"]))),
        ("a feature twice", edit(&|v| v["features"] = serde_json::json!(["std", "std"]))),
        ("an unknown target", edit(&|v| v["targets"] = serde_json::json!(["riscv"]))),
        ("a target twice", edit(&|v| v["targets"] = serde_json::json!(["native", "native"]))),
        ("no targets", edit(&|v| v["targets"] = serde_json::json!([]))),
        ("an unknown type", edit(&|v| v["output"] = "Vec<Hash".into())),
        (
            "value types of its own and of another crate in, one of its own out",
            edit(&|v| {
                v["groups"] = serde_json::json!(["SYS"]);
                v["inputs"] = serde_json::json!(["op_sample::Image", "Vec<op_other::Image>"]);
                v["input_names"] = serde_json::json!(["image", "others"]);
                v["output"] = "op_sample::Filter".into();
            }),
        ),
        ("a value type of its own it does not define", edit(&|v| v["output"] = "Vec<op_sample::Photo>".into())),
        (
            "a field of a value type of its own it does not define",
            edit(&|v| v["types"]["Image"]["record"][0]["type"] = "op_sample::Photo".into()),
        ),
        ("a value type whose name is lower-case", edit(&|v| v["types"]["image"] = v["types"]["Image"].clone())),
        ("a choice with no variants", edit(&|v| v["types"]["Filter"]["choice"] = serde_json::json!([]))),
        ("a member name with a quote", edit(&|v| v["types"]["Filter"]["choice"] = serde_json::json!(["a\"b"]))),
        ("a member twice", edit(&|v| v["types"]["Filter"]["choice"] = serde_json::json!(["a", "a"]))),
        ("an unknown field type", edit(&|v| v["types"]["Image"]["record"][0]["type"] = "u32".into())),
        ("a value type both record and choice", edit(&|v| v["types"]["Filter"]["record"] = serde_json::json!([]))),
        (
            "a U64 and a Bool in, a Multihash out",
            edit(&|v| {
                v["groups"] = serde_json::json!(["SYS"]);
                v["inputs"] = serde_json::json!(["U64", "Bool"]);
                v["input_names"] = serde_json::json!(["size", "exact"]);
                v["output"] = "Multihash".into();
            }),
        ),
        ("a version that is not semver", edit(&|v| v["version"] = "1.2".into())),
        ("a name that is not a crate name", edit(&|v| v["name"] = "op x".into())),
        ("an empty description", edit(&|v| v["description"] = "".into())),
        ("a description with a tab", edit(&|v| v["description"] = "a\tb".into())),
        ("no source (as the macro builds it)", edit(&|v| drop(v.as_object_mut().unwrap().remove("source")))),
        ("a source that is not a content id", edit(&|v| v["source"] = "bafkr4inot".into())),
        (
            "an empty repository and license",
            edit(&|v| {
                v["repository"] = "".into();
                v["license"] = "".into();
            }),
        ),
    ]
}

/// The snapshot text of the current schema.
fn snapshot() -> String {
    let manifest = sample();
    let json = serde_json::to_value(&manifest).unwrap();
    let mut out = String::new();
    let _ = writeln!(out, "braid-schema operation manifest, SCHEMA_VERSION {SCHEMA_VERSION}\n\nfields:");
    for (field, value) in json.as_object().unwrap() {
        let _ = writeln!(out, "  {field}: {}", shape(value));
    }
    let scalars = [
        "Bytes",
        "String",
        "Multihash",
        "Cid",
        "U64",
        "Bool",
        "Vec<Bytes>",
        "Vec<Vec<T>>",
        "T",
        "u8",
        "Vec",
        "op_image::Image",
        "Vec<op_image::Image>",
        "op_image::image",
        "Op::Image",
        "a::b::C",
    ];
    let _ = writeln!(out, "\ntype names (text -> parsed back):");
    for text in scalars {
        let parsed = TypeName::parse(text).map(|t| t.to_string()).unwrap_or_else(|_| "rejected".into());
        let _ = writeln!(out, "  {text} -> {parsed}");
    }
    let _ = writeln!(out, "\nfield types (text -> parsed back):");
    for text in [
        "Bytes",
        "String",
        "Number",
        "BigInt",
        "Bool",
        "Vec<Number>",
        "Option<Map<op_a::B>>",
        "Option<Option<Bool>>",
        "u32",
        "Image",
    ] {
        let parsed = FieldType::parse(text).map(|t| t.to_string()).unwrap_or_else(|_| "rejected".into());
        let _ = writeln!(out, "  {text} -> {parsed}");
    }
    let platforms: Vec<&str> = Platform::ALL.iter().map(|p| p.as_str()).collect();
    let _ = writeln!(out, "\nplatforms: {}", platforms.join(", "));
    let _ = writeln!(out, "\nchecks:");
    for (what, value) in probes() {
        let verdict = match OperationManifest::parse(&value.to_string()) {
            Ok(_) => "accepted",
            Err(_) => "rejected",
        };
        let _ = writeln!(out, "  {what}: {verdict}");
    }
    let _ = writeln!(out, "\ncanonical JSON of the sample:\n  {}", manifest.canonical_json());
    let _ = writeln!(out, "version id of the sample:\n  {}", manifest.version_id());
    let _ = writeln!(out, "content id of b\"braid\":\n  {}", content_id(b"braid"));
    out
}

fn snapshot_path(version: u32) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/schema/v{version}.txt"))
}

#[test]
fn schema_changes_bump_the_schema_version() {
    let current = snapshot();
    let path = snapshot_path(SCHEMA_VERSION);
    let bless = std::env::var_os("BRAID_BLESS").is_some_and(|v| v == "1");
    match std::fs::read_to_string(&path) {
        Ok(committed) => assert!(
            committed == current,
            "the operation-manifest schema changed, but SCHEMA_VERSION is still {SCHEMA_VERSION} \
             (snapshot {}): bump SCHEMA_VERSION in generator/schema/src/lib.rs, then re-bless with \
             `BRAID_BLESS=1 cargo test -p braid-schema --test schema_version` and review the new snapshot.\n\
             --- committed\n{committed}\n--- now\n{current}",
            path.display()
        ),
        Err(_) if bless => std::fs::write(&path, &current).unwrap(),
        Err(_) => panic!(
            "no snapshot of SCHEMA_VERSION {SCHEMA_VERSION} at {}: bless it with \
             `BRAID_BLESS=1 cargo test -p braid-schema --test schema_version` and commit it",
            path.display()
        ),
    }
}

#[test]
fn no_snapshot_is_newer_than_the_schema_version() {
    let newer = snapshot_path(SCHEMA_VERSION + 1);
    assert!(!newer.exists(), "{} exists: SCHEMA_VERSION went backwards", newer.display());
}
