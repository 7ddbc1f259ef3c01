//! Hostile and broken manifests: each is rejected with an error at the
//! right JSON pointer (with a line and column), or, when it is merely odd,
//! yields source in which every user string is an escaped literal.

use braid::codegen::Generator;
use braid::manifest::validate;
use braid::Registry;
use serde_json::json;

fn lib_rs(files: &[braid::codegen::File]) -> String {
    files.iter().find(|f| f.path == "src/lib.rs").unwrap().contents.clone()
}

fn manifest(segments: serde_json::Value) -> String {
    json!({ "name": "adv", "version": "0.1.0", "segments": segments }).to_string()
}

fn cid_segment() -> serde_json::Value {
    json!({ "inputs": [-1], "sequence": [{ "operation": "op_multihash", "version": "^0.1" }, { "operation": "op_cid", "version": "^0.1" }] })
}

/// Asserts that `text` is rejected with a diagnostic at `pointer` whose
/// message (or expected/found/hint) contains `needle`.
fn rejects(text: &str, pointer: &str, needle: &str) {
    let diagnostics = validate(text, &Registry::builtin()).expect_err("must be rejected");
    let hit = diagnostics.iter().find(|d| {
        d.pointer == pointer
            && [Some(&d.message), d.expected.as_ref(), d.found.as_ref(), d.hint.as_ref()]
                .into_iter()
                .flatten()
                .any(|s| s.contains(needle))
    });
    let hit = hit.unwrap_or_else(|| panic!("no diagnostic at {pointer:?} mentioning {needle:?}; got {diagnostics:#?}"));
    assert!(hit.line.is_some() && hit.column.is_some(), "{hit:?} has no position");
}

#[test]
fn names_that_cannot_name_a_crate() {
    for name in ["1abc", "a\"b", "a\nb", "nul\u{0}", "café", "", "a b", "x".repeat(65).as_str(), "*/", "\"#"] {
        let text = json!({ "name": name, "version": "0.1.0", "segments": [cid_segment()] }).to_string();
        rejects(&text, "/name", "cannot name a crate");
    }
}

#[test]
fn keyword_names_are_fine_behind_the_prefix() {
    let registry = Registry::builtin();
    for name in ["self", "crate", "Self", "fn", "r", "super"] {
        let text = json!({ "name": name, "version": "0.1.0", "segments": [cid_segment()] }).to_string();
        let w = validate(&text, &registry).unwrap();
        let files = Generator::new().render(&w).unwrap();
        syn::parse_file(&lib_rs(&files)).unwrap();
        assert!(files[0].contents.contains(&format!("name = \"wf_{}\"", name.to_lowercase())));
    }
}

#[test]
fn hostile_strings_stay_literals() {
    let description = "quote \" backslash \\ */ \"# newline\n tab\t bidi \u{202e} unicode 漢字 🦀 }} {{x}} ');";
    let text = json!({ "name": "adv", "version": "0.1.0", "description": description, "segments": [cid_segment()] })
        .to_string();
    let w = validate(&text, &Registry::builtin()).unwrap();
    let files = Generator::new().render(&w).unwrap();
    let lib = syn::parse_file(&lib_rs(&files)).unwrap();
    // The description is exactly one doc attribute with the same value.
    let doc = lib.attrs.iter().find(|a| a.path().is_ident("doc")).unwrap();
    let syn::Meta::NameValue(nv) = &doc.meta else { panic!() };
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value else { panic!() };
    assert_eq!(s.value(), description);
    // And nothing outside printable ASCII reaches the Rust source.
    assert!(lib_rs(&files).bytes().all(|b| b == b'\n' || (0x20..0x7f).contains(&b)));
    // The TOML description is the same text.
    let toml: toml::Table = files[0].contents.parse().unwrap();
    assert_eq!(toml["package"]["description"].as_str(), Some(description));
}

#[test]
fn control_characters_in_the_description_are_refused() {
    for c in ['\u{0}', '\u{7}', '\u{1b}', '\u{7f}'] {
        let text =
            json!({ "name": "adv", "version": "0.1.0", "description": format!("a{c}b"), "segments": [cid_segment()] });
        rejects(&text.to_string(), "/description", "control character");
    }
}

#[test]
fn references() {
    let fwd = manifest(json!([{ "inputs": [1], "sequence": [{ "operation": "op_utf8" }] }, cid_segment()]));
    rejects(&fwd, "/segments/0/inputs/0", "cannot use segment 1");
    let selfref = manifest(json!([cid_segment(), { "inputs": [1], "sequence": [{ "operation": "op_cid" }] }]));
    rejects(&selfref, "/segments/1/inputs/0", "cannot use segment 1");
    for bad in [json!(-5), json!(1e30), json!(99999999999999999999u128 as f64), json!(0.5), json!(null)] {
        let text = manifest(json!([{ "inputs": [bad], "sequence": [{ "operation": "op_utf8" }] }]));
        rejects(&text, "/segments/0/inputs/0", "-1");
    }
    let quoted = manifest(json!([{ "inputs": ["0"], "sequence": [{ "operation": "op_utf8" }] }]));
    rejects(&quoted, "/segments/0/inputs/0", "write 0 without quotes");
    let unused = manifest(json!([cid_segment(), cid_segment()]));
    rejects(&unused, "/segments/0", "never used");
    rejects(&manifest(json!([])), "/segments", "1 to 128");
    let none = manifest(json!([{ "inputs": [], "sequence": [{ "operation": "op_utf8" }] }]));
    rejects(&none, "/segments/0/inputs", "no inputs");
}

#[test]
fn arity_and_types() {
    let two = manifest(json!([{ "inputs": [-1, -1], "sequence": [{ "operation": "op_multihash" }] }]));
    rejects(&two, "/segments/0/inputs", "op_multihash takes 1 input(s)");
    let chain =
        manifest(json!([{ "inputs": [-1], "sequence": [{ "operation": "op_cid" }, { "operation": "op_multihash" }] }]));
    rejects(&chain, "/segments/0/sequence/1", "type mismatch: op_multihash takes Bytes, op_cid outputs Cid");
    let edge = manifest(json!([cid_segment(), { "inputs": [0], "sequence": [{ "operation": "op_multihash" }] }]));
    rejects(&edge, "/segments/1/inputs/0", "Cid (output of segment 0)");
    let mixed = manifest(json!([
        { "inputs": [-1], "sequence": [{ "operation": "op_utf8" }] },
        cid_segment(),
        { "inputs": [0, 1], "sequence": [{ "operation": "op_collect" }] }
    ]));
    rejects(&mixed, "/segments/2/inputs/1", "takes inputs of one type");
    let untyped = manifest(json!([{ "inputs": [-1, -1], "sequence": [{ "operation": "op_collect" }] }]));
    rejects(&untyped, "/segments/0/inputs", "cannot tell the type");
}

#[test]
fn repeated_keys_are_refused_where_they_repeat() {
    let text = "{\n  \"name\": \"a\",\n  \"version\": \"0.1.0\",\n  \"name\": \"b\",\n  \"segments\": []\n}";
    let diagnostics = validate(text, &Registry::builtin()).expect_err("must be rejected");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    assert!(d.message.contains("the key \"name\" appears twice in one object"), "{d:?}");
    assert_eq!(d.line, Some(4), "{d:?}");
    // Nested objects too: a config key given twice.
    let config = r#"{"name":"a","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_multihash","config":{"hasher":"blake3","hasher":"sha2-256"}}]}]}"#;
    let diagnostics = validate(config, &Registry::builtin()).expect_err("must be rejected");
    assert!(diagnostics[0].message.contains("the key \"hasher\" appears twice"), "{diagnostics:#?}");
}

#[test]
fn operations_versions_and_config() {
    let op = |o: serde_json::Value| manifest(json!([{ "inputs": [-1], "sequence": [o] }]));
    rejects(
        &op(json!({ "operation": "op_multihsh" })),
        "/segments/0/sequence/0/operation",
        "did you mean \"op_multihash\"",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "version": "^0.2" })),
        "/segments/0/sequence/0/version",
        "no version of op_multihash",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "version": "not semver" })),
        "/segments/0/sequence/0/version",
        "not a version requirement",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "config": { "hasher": "md5" } })),
        "/segments/0/sequence/0/config/hasher",
        "one of blake3",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "config": { "hasher": "blake3\"); panic!(\"" } })),
        "/segments/0/sequence/0/config/hasher",
        "does not allow this value",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "config": { "hashr": "blake3" } })),
        "/segments/0/sequence/0/config/hashr",
        "did you mean \"hasher\"",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "config": { "hasher": "blak3" } })),
        "/segments/0/sequence/0/config/hasher",
        "did you mean \"blake3\"",
    );
    rejects(
        &op(json!({ "operation": "op_multihash", "config": { "a/b~c": "x" } })),
        "/segments/0/sequence/0/config/a~1b~0c",
        "no config key",
    );
    rejects(
        &op(json!({ "operation": "op_utf8", "config": { "x": 1 } })),
        "/segments/0/sequence/0/config/x",
        "config values are strings",
    );
    rejects(
        &op(json!({ "versionId": "bafkr4inotarealid" })),
        "/segments/0/sequence/0/versionId",
        "no operation in the registry",
    );
    rejects(&op(json!({ "operation": "op_utf8", "extra": true })), "/segments/0/sequence/0/extra", "unknown field");
    rejects(&op(json!({})), "/segments/0/sequence/0", "needs `operation`");
    // A versionId from the registry works.
    let registry = Registry::builtin();
    let id = registry.get("op_utf8").unwrap().version_id.clone();
    let text = op(json!({ "versionId": id }));
    validate(&text, &registry).unwrap();
}

#[test]
fn limits_and_garbage() {
    let segs: Vec<serde_json::Value> = (0..129)
        .map(|i| {
            if i == 0 {
                json!({ "inputs": [-1], "sequence": [{ "operation": "op_utf8" }] })
            } else {
                json!({ "inputs": [i - 1], "sequence": [{ "operation": "op_concat" }] })
            }
        })
        .collect();
    rejects(&manifest(json!(segs)), "/segments", "1 to 128 segments");
    let ops: Vec<serde_json::Value> = (0..129).map(|_| json!({ "operation": "op_utf8" })).collect();
    rejects(&manifest(json!([{ "inputs": [-1], "sequence": ops }])), "/segments/0/sequence", "1 to 128 operations");
    let huge =
        json!({ "name": "adv", "version": "0.1.0", "description": "x".repeat(2 << 20), "segments": [cid_segment()] })
            .to_string();
    let d = validate(&huge, &Registry::builtin()).unwrap_err();
    assert_eq!(d.len(), 1);
    assert!(d[0].message.contains("too large"), "{d:?}");
    for garbage in ["", "not json", "{", "[1, 2]", "null", "\"text\"", "{\"name\": \"a\",}"] {
        let d = validate(garbage, &Registry::builtin()).unwrap_err();
        assert!(!d.is_empty(), "{garbage:?}");
    }
    let deep = "[".repeat(100_000);
    let d = validate(&deep, &Registry::builtin()).unwrap_err();
    assert!(d[0].message.contains("not valid JSON"), "{d:?}");
    rejects("{\"name\": \"a\", \"version\": \"0.1.0\", \"segments\": 3}", "/segments", "must be an array");
    rejects("{\"name\": \"a\", \"version\": \"0.1.0\", \"segments\": [], \"x~y/z\": 1}", "/x~0y~1z", "unknown field");
}

/// A broken segment is reported once: segments using its output are not
/// checked against a guess of it, and segments that do not depend on it
/// still get their own errors.
#[test]
fn a_broken_segment_neither_cascades_nor_hides_independent_errors() {
    let seg = |inputs: serde_json::Value, ops: &[&str]| json!({ "inputs": inputs, "sequence": ops.iter().map(|o| json!({ "operation": o })).collect::<Vec<_>>() });
    let typo = seg(json!([-1]), &["op_utf8", "op_cid"]); // op_cid takes a Multihash, op_utf8 gives Bytes
    for (broken, pointer) in [
        (seg(json!([-1, -1]), &["op_multihash"]), "/segments/0/inputs"), // arity
        (seg(json!([9]), &["op_multihash"]), "/segments/0/inputs/0"),    // a reference forward
    ] {
        let text = json!({
            "name": "casc", "version": "0.1.0",
            "segments": [broken, typo, seg(json!([0, 1]), &["op_collect"])]
        })
        .to_string();
        let d = validate(&text, &Registry::builtin()).unwrap_err();
        let pointers: Vec<&str> = d.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(pointers, [pointer, "/segments/1/sequence/1"], "{d:#?}");
    }
}

#[test]
fn all_errors_are_reported_at_once() {
    let text = json!({
        "name": "bad name", "version": "x", "extra": 1,
        "segments": [{ "inputs": [-1], "sequence": [{ "operation": "nope" }, { "operation": "op_cid", "config": { "base": "base2" } }] }]
    })
    .to_string();
    let d = validate(&text, &Registry::builtin()).unwrap_err();
    let pointers: Vec<&str> = d.iter().map(|d| d.pointer.as_str()).collect();
    for p in ["/name", "/version", "/extra", "/segments/0/sequence/0/operation", "/segments/0/sequence/1/config/base"] {
        assert!(pointers.contains(&p), "{p} missing from {pointers:?}");
    }
}

#[test]
fn hostile_text_in_every_string_field_is_rejected_at_that_field_or_stays_inert() {
    let nasty = ["", "\u{0}", "a\"b", "*/", "\"#", "x\ny", "漢字🦀", "\u{202e}", "${x}", "{{x}}", "self", "1"];
    let base = || {
        json!({
            "name": "adv", "version": "0.1.0", "description": "d", "groups": ["SYS"],
            "segments": [{ "inputs": [-1], "sequence": [
                { "operation": "op_multihash", "version": "^0.1", "config": { "hasher": "blake3" } },
                { "operation": "op_cid", "version": "^0.1" } ] }]
        })
    };
    type Setter = fn(&mut serde_json::Value, &str);
    let fields: Vec<(&str, Setter)> = vec![
        ("/name", |m, s| m["name"] = s.into()),
        ("/version", |m, s| m["version"] = s.into()),
        ("/description", |m, s| m["description"] = s.into()),
        ("/groups/0", |m, s| m["groups"][0] = s.into()),
        ("/segments/0/sequence/0/operation", |m, s| m["segments"][0]["sequence"][0]["operation"] = s.into()),
        ("/segments/0/sequence/0/version", |m, s| m["segments"][0]["sequence"][0]["version"] = s.into()),
        ("/segments/0/sequence/0/versionId", |m, s| m["segments"][0]["sequence"][0]["versionId"] = s.into()),
        ("/segments/0/sequence/0/config/hasher", |m, s| m["segments"][0]["sequence"][0]["config"]["hasher"] = s.into()),
        ("/segments/0/sequence/0/config", |m, s| m["segments"][0]["sequence"][0]["config"][s] = "x".into()),
    ];
    let registry = Registry::builtin();
    let generator = Generator::new();
    for (pointer, set) in &fields {
        for s in nasty {
            let mut m = base();
            set(&mut m, s);
            match validate(&m.to_string(), &registry) {
                Err(diagnostics) => assert!(
                    diagnostics.iter().all(|d| d.pointer.starts_with(pointer) && d.line.is_some()),
                    "{pointer} = {s:?}: {diagnostics:#?}"
                ),
                Ok(w) => {
                    // Accepted: the source still parses and holds no raw control or non-ASCII text.
                    let files = generator.render(&w).unwrap();
                    syn::parse_file(&lib_rs(&files)).unwrap_or_else(|e| panic!("{pointer} = {s:?}: {e}"));
                    assert!(
                        lib_rs(&files).bytes().all(|b| b == b'\n' || (0x20..0x7f).contains(&b)),
                        "{pointer} = {s:?}"
                    );
                    files[0].contents.parse::<toml::Table>().unwrap_or_else(|e| panic!("{pointer} = {s:?}: {e}"));
                }
            }
        }
    }
}

#[test]
fn input_names_are_identifiers_one_per_external_input() {
    let named = |inputs: serde_json::Value| {
        json!({ "name": "adv", "version": "0.1.0", "inputs": inputs, "segments": [cid_segment()] }).to_string()
    };
    let workflow = validate(&named(json!(["photo"])), &Registry::builtin()).unwrap();
    assert_eq!(workflow.signature(), "photo: Bytes -> Cid");
    let lib = lib_rs(&Generator::new().render(&workflow).unwrap());
    assert!(lib.contains("pub async fn run(photo: ::braid_support::Bytes, )"), "{lib}");
    assert!(lib.contains("pub fn run_sync(photo: ::braid_support::Bytes, )"), "{lib}");
    // The TypeScript declarations (a literal in lib.rs) label the tuple.
    assert!(lib.contains("export type RunInputs = [photo: Uint8Array];"), "{lib}");
    assert!(lib.contains("adv input 0 (photo)"), "JS errors name the input: {lib}");
    // Without names, the manifest (and its id) is what it was.
    let unnamed = validate(&manifest(json!([cid_segment()])), &Registry::builtin()).unwrap();
    assert_eq!(unnamed.signature(), "Bytes -> Cid");
    assert!(serde_json::to_value(&unnamed.manifest).unwrap().get("inputs").is_none(), "no top-level inputs");

    rejects(&named(json!(["a", "b"])), "/inputs", "1 name(s): one per -1");
    rejects(&named(json!([])), "/inputs", "`inputs` is empty");
    rejects(&named(json!("photo")), "/inputs", "must be an array of names");
    rejects(&named(json!([7])), "/inputs/0", "a string");
    for bad in ["Photo", "1x", "a-b", "a b", "", "héllo", "x\"y", "*/"] {
        rejects(&named(json!([bad])), "/inputs/0", "not a lower-case identifier");
    }
    for reserved in ["fn", "self", "run", "run_sync", "function", "new", "default", "await"] {
        rejects(&named(json!([reserved])), "/inputs/0", "reserved word");
    }
    let twice = json!({ "name": "adv", "version": "0.1.0", "inputs": ["a", "a"],
        "segments": [{ "inputs": [-1, -1], "sequence": [{ "operation": "op_collect" }] }] });
    rejects(&twice.to_string(), "/inputs/1", "given twice");
}

/// A segment names an external input by its name from `inputs`: the same
/// name is one value (one parameter of `run`, taken once by `next`, kept
/// for the later segments that name it too).
#[test]
fn a_named_input_is_one_value_wherever_segments_name_it() {
    let utf8 = json!([{ "operation": "op_utf8" }]);
    let join = json!([{ "operation": "op_collect" }, { "operation": "op_concat" }]);
    let text = |inputs: serde_json::Value, segments: serde_json::Value| {
        json!({ "name": "adv", "version": "0.1.0", "inputs": inputs, "segments": segments }).to_string()
    };
    let shared = text(
        json!(["text", "salt"]),
        json!([
            { "inputs": ["text"], "sequence": utf8 },
            { "inputs": [0, "salt"], "sequence": join },
            { "inputs": ["text"], "sequence": utf8 },
            { "inputs": [1, 2], "sequence": [{ "operation": "op_collect" }, { "operation": "op_concat" },
                { "operation": "op_multihash" }, { "operation": "op_cid" }] }
        ]),
    );
    let workflow = validate(&shared, &Registry::builtin()).unwrap();
    assert_eq!(workflow.signature(), "text: String, salt: Bytes -> Cid");
    assert_eq!(workflow.uses_of_input(0), 2);
    let lib = lib_rs(&Generator::new().render(&workflow).unwrap());
    syn::parse_file(&lib).unwrap();
    assert!(
        lib.contains("pub async fn run(text: ::braid_support::__private::String, salt: ::braid_support::Bytes, )"),
        "{lib}"
    );
    // `next` takes the text once, with segment 0, and keeps it for segment 2.
    assert!(lib.contains("i0: ::core::option::Option<::alloc::rc::Rc<::braid_support::__private::String>>"), "{lib}");
    assert!(lib.contains("self.state.memos.i0 = Some(::alloc::rc::Rc::new(input0));"), "{lib}");
    assert!(
        lib.contains("segment2(&self.config, ::braid_support::workflow::kept_input(&self.state.memos.i0, NAME, 0)?, )"),
        "{lib}"
    );
    assert!(lib.contains("export type Segment1Inputs = [salt: Uint8Array];"), "{lib}");
    // The id is of the manifest as written: names as names, -1 as -1 (so
    // manifests of -1s keep their ids; the golden files hold some).
    let model = serde_json::to_value(&workflow.manifest).unwrap();
    assert_eq!(model["segments"][1]["inputs"], json!([0, "salt"]));
    let by_index = validate(&manifest(json!([cid_segment()])), &Registry::builtin()).unwrap();
    assert_eq!(serde_json::to_value(&by_index.manifest).unwrap()["segments"][0]["inputs"], json!([-1]));

    // Diagnostics say what to write.
    let one_name_twice_by_index =
        text(json!(["text"]), json!([{ "inputs": [-1], "sequence": utf8 }, { "inputs": [0, -1], "sequence": join }]));
    rejects(&one_name_twice_by_index, "/inputs", "write its name instead of -1");
    let mixed = text(
        json!(["text", "salt"]),
        json!([{ "inputs": ["text"], "sequence": utf8 }, { "inputs": [0, -1], "sequence": join }]),
    );
    rejects(&mixed, "/segments/1/inputs/1", "an input's name: \"text\", \"salt\"");
    let typo = text(json!(["text"]), json!([{ "inputs": ["txt"], "sequence": utf8 }]));
    rejects(&typo, "/segments/0/inputs/0", "did you mean \"text\"?");
    let unlisted = manifest(json!([{ "inputs": ["text"], "sequence": utf8 }]));
    rejects(&unlisted, "/segments/0/inputs/0", "\"inputs\": [\"text\"]");
    let unused = text(json!(["text", "salt"]), json!([{ "inputs": ["text"], "sequence": utf8 }]));
    rejects(&unused, "/inputs/1", "input \"salt\" is never used");
    let two_types = text(
        json!(["text"]),
        json!([{ "inputs": ["text"], "sequence": utf8 }, { "inputs": [0, "text"], "sequence": join }]),
    );
    rejects(&two_types, "/segments/1/inputs/1", "goes to steps that take different types");
    rejects(&manifest(json!([{ "inputs": [{}], "sequence": utf8 }])), "/segments/0/inputs/0", "an input's name");
}

/// Operation manifests name their inputs (the parameters' names), so
/// diagnostics say which input is wrong, and a type mismatch names the
/// registered operations that convert one type into the other.
#[test]
fn type_mismatches_name_the_input_and_what_converts() {
    let utf8 = json!({ "inputs": [-1], "sequence": [{ "operation": "op_utf8" }] });
    let proof = |inputs: serde_json::Value| {
        manifest(json!([utf8, { "inputs": inputs, "sequence": [{ "operation": "op_photo_proof" }] }]))
    };
    rejects(&proof(json!([-1, 0, -1, -1])), "/segments/1/inputs/1", "op_photo_proof input 1 (`pixels_cid`) is Cid");
    rejects(
        &proof(json!([-1, 0])),
        "/segments/1/inputs",
        "file_cid: Cid, pixels_cid: Cid, blockhash: String, image: op_image_decode::Image",
    );
    let chain =
        manifest(json!([{ "inputs": [-1], "sequence": [{ "operation": "op_utf8" }, { "operation": "op_cid" }] }]));
    rejects(&chain, "/segments/0/sequence/1", "`op_multihash` turns Bytes into Multihash: put it between them");
    let op = Registry::builtin().get("op_photo_proof").unwrap().manifest.clone();
    assert_eq!(op.input_names, ["file_cid", "pixels_cid", "blockhash", "image"]);
    assert_eq!(Registry::builtin().get("op_collect").unwrap().manifest.input_names, ["inputs"]);
}

#[test]
fn an_unknown_field_is_pointed_at_by_its_key() {
    let text = "{\n  \"name\": \"x\",\n  \"version\": \"0.1.0\",\n  \"extra\": [1, 2],\n  \"segments\": []\n}";
    let diagnostics = braid::manifest::validate(text, &braid::Registry::builtin()).unwrap_err();
    let extra = diagnostics.iter().find(|d| d.pointer == "/extra").expect("the unknown field");
    assert_eq!((extra.line, extra.column), (Some(4), Some(3)), "{extra:?}");
}
