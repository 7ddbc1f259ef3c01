//! Value types of one's own in workflows: the validator keeps types of the
//! same name from different crates apart and says which is which, checks
//! them through flow-control generics, and refuses two of one name at a
//! workflow's boundary (TypeScript declares them side by side). The crates
//! here are registered from their source, as `braid ops add` does.

use braid::manifest::validate;
use braid::registry::{prepare, Origin};
use braid::Registry;
use serde_json::json;

/// `op_photo`: takes its own `Image` (a record of the same name as
/// op_image_decode's) to its pixels.
fn registry() -> Registry {
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"op_photo\"\nversion = \"0.2.0\"\ndescription = \"An image's pixels\"\n\n\
             [features]\ndefault = [\"std\"]\nstd = []\nwasm = []\n\n[dependencies]\nbraid-support = \"0.1\"\nbraid-macros = \"0.1\"\n",
        ),
        (
            "src/lib.rs",
            "#![no_std]\nextern crate alloc;\nuse braid_support::{Bytes, Config, Error};\n\n\
             #[derive(Clone, braid_macros::Value)]\npub struct Image { pub pixels: Bytes }\n\n\
             #[braid_macros::operation]\npub async fn execute(input: &Image, config: &Config) -> Result<Bytes, Error> {\n    \
             Ok(input.pixels.clone())\n}\n",
        ),
    ];
    let files = files.into_iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    let prepared = prepare(files, "op_photo").expect("op_photo prepares");
    assert_eq!(prepared.manifest.inputs[0].to_string(), "op_photo::Image");
    let mut registry = Registry::builtin();
    registry.add(prepared, Origin::Added).unwrap();
    registry
}

fn workflow(segments: serde_json::Value) -> String {
    json!({ "name": "types", "version": "0.1.0", "segments": segments }).to_string()
}

#[test]
fn types_of_one_name_from_two_crates_are_told_apart() {
    let text = workflow(json!([{ "inputs": [-1], "sequence": [
        { "operation": "op_image_decode", "version": "^0.1" },
        { "operation": "op_photo", "version": "^0.2" }
    ] }]));
    let diagnostics = validate(&text, &registry()).expect_err("an op_image_decode::Image is not an op_photo::Image");
    let d = &diagnostics[0];
    assert_eq!(d.pointer, "/segments/0/sequence/1");
    assert_eq!(
        d.message,
        "type mismatch: op_photo takes op_photo::Image, op_image_decode outputs op_image_decode::Image"
    );
}

#[test]
fn flow_control_generics_carry_value_types() {
    let registry = registry();
    let collected = workflow(json!([
        { "inputs": [-1], "sequence": [{ "operation": "op_image_decode", "version": "^0.1" }] },
        { "inputs": [0, -1, 0], "sequence": [{ "operation": "op_collect", "version": "^0.1" }] }
    ]));
    let w = validate(&collected, &registry).unwrap();
    assert_eq!(w.output().to_string(), "Vec<op_image_decode::Image>");
    assert_eq!(w.external_inputs()[1].to_string(), "op_image_decode::Image");
    let mixed = workflow(json!([
        { "inputs": [-1], "sequence": [{ "operation": "op_image_decode", "version": "^0.1" }] },
        { "inputs": [-1], "sequence": [{ "operation": "op_utf8", "version": "^0.1" }] },
        { "inputs": [0, 1], "sequence": [{ "operation": "op_collect", "version": "^0.1" }] }
    ]));
    let d = validate(&mixed, &registry).unwrap_err();
    assert_eq!(d[0].pointer, "/segments/2/inputs/1");
    assert_eq!(d[0].expected.as_deref(), Some("op_image_decode::Image"));
}

#[test]
fn two_value_types_of_one_name_at_the_boundary_are_refused() {
    let text = workflow(json!([
        { "inputs": [-1], "sequence": [{ "operation": "op_photo", "version": "^0.2" }] },
        { "inputs": [0], "sequence": [{ "operation": "op_image_decode", "version": "^0.1" }] }
    ]));
    let d = validate(&text, &registry()).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].message, "two value types named `Image` at the workflow's inputs and output");
    assert_eq!(d[0].found.as_deref(), Some("op_photo::Image and op_image_decode::Image"));
}

/// `op_shapes`: value types only (`kind = "types"`), registered like an
/// operation; `op_dot` takes its `Point` by depending on it.
fn registry_with_a_types_crate() -> Registry {
    let mut registry = registry();
    let crates: [(&str, &[(&str, &str)]); 2] = [
        (
            "op_shapes",
            &[
            (
                "Cargo.toml",
                "[package]\nname = \"op_shapes\"\nversion = \"0.1.0\"\ndescription = \"Shapes\"\n\n\
                 [package.metadata.braid]\nkind = \"types\"\n\n[dependencies]\nbraid-macros = \"0.1\"\n",
            ),
            ("src/lib.rs", "#![no_std]\n#[derive(Clone, braid_macros::Value)]\npub struct Point { pub x: u32 }\n"),
        ],
        ),
        (
            "op_dot",
            &[
            (
                "Cargo.toml",
                "[package]\nname = \"op_dot\"\nversion = \"0.1.0\"\ndescription = \"A point's x\"\n\n\
                 [dependencies]\nbraid-support = \"0.1\"\nbraid-macros = \"0.1\"\nop_shapes = \"0.1\"\n",
            ),
            (
                "src/lib.rs",
                "#![no_std]\nuse braid_support::{Config, Error, U64};\n\n#[braid_macros::operation]\n\
                 pub async fn execute(p: &op_shapes::Point, config: &Config) -> Result<U64, Error> {\n    Ok(p.x.into())\n}\n",
            ),
        ],
        ),
    ];
    for (name, files) in crates {
        let files = files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        registry.add(prepare(files, name).expect("prepares"), Origin::Added).unwrap();
    }
    registry
}

#[test]
fn a_crate_of_value_types_is_a_dependency_not_a_step() {
    let registry = registry_with_a_types_crate();
    let shapes = registry.get("op_shapes").unwrap();
    assert_eq!(shapes.manifest.kind, braid::schema::Kind::Types);
    // op_dot's workflow carries op_shapes as a crate, not as a step.
    let text = workflow(json!([{ "inputs": [-1], "sequence": [{ "operation": "op_dot", "version": "^0.1" }] }]));
    let w = validate(&text, &registry).unwrap();
    assert_eq!(w.external_inputs()[0].to_string(), "op_shapes::Point");
    let crates: Vec<&str> = w.crates.iter().map(|op| op.name()).collect();
    assert_eq!(crates, ["op_dot", "op_shapes"]);
    // As a step: refused, saying what it is and what it defines.
    let text = workflow(json!([{ "inputs": [-1], "sequence": [{ "operation": "op_shapes", "version": "^0.1" }] }]));
    let d = validate(&text, &registry).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].pointer, "/segments/0/sequence/0");
    assert_eq!(d[0].message, "op_shapes is a crate of value types only, not an operation");
    assert_eq!(d[0].found.as_deref(), Some("op_shapes 0.1.0 (defines op_shapes::Point)"));
}
