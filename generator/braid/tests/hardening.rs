//! Regressions from the hostile-input probe (issue 9): inputs that crashed,
//! hung or exhausted the validator, and manifests that validated although
//! they could not be built or published. Each test failed before its fix.

use braid::diagnostic::Diagnostic;
use braid::manifest::{self, validate, validate_bytes};
use braid::Registry;
use serde_json::json;

fn registry() -> Registry {
    Registry::builtin()
}

/// Renders every diagnostic (as the CLI does), so rendering is exercised too.
fn render_all(text: &[u8], diagnostics: &[Diagnostic]) -> String {
    let source = std::str::from_utf8(text).ok();
    diagnostics.iter().map(|d| d.render("m.json", source)).collect()
}

fn rejected_at(text: &[u8], pointer: &str, needle: &str) -> Vec<Diagnostic> {
    let diagnostics = validate_bytes(text, &registry()).expect_err("must be rejected");
    render_all(text, &diagnostics);
    assert!(
        diagnostics.iter().any(|d| d.pointer == pointer
            && [Some(&d.message), d.expected.as_ref(), d.found.as_ref(), d.hint.as_ref()]
                .into_iter()
                .flatten()
                .any(|s| s.contains(needle))),
        "no diagnostic at {pointer:?} mentioning {needle:?}: {diagnostics:#?}"
    );
    diagnostics
}

#[test]
fn a_trailing_backslash_in_an_unterminated_key_is_a_diagnostic() {
    // Over the size limit (the probe's input), and under it.
    for n in [1_100_000, 1000] {
        let text = format!("{{\"{}\\", "a".repeat(n));
        let diagnostics = validate_bytes(text.as_bytes(), &registry()).expect_err("not a manifest");
        render_all(text.as_bytes(), &diagnostics);
        assert_eq!(diagnostics[0].pointer, "");
    }
    for text in ["\"\\", "{\"a\\", "[\"\\", "{\"a\":\"\\", "\\", "{\"\\\"", "{\"é\\"] {
        let diagnostics = validate(text, &registry()).expect_err("not a manifest");
        render_all(text.as_bytes(), &diagnostics);
    }
}

#[test]
fn deep_brackets_over_the_size_limit_do_not_hang_the_locator() {
    for open in ["[", "{\"a\":", "[{\"b\":["] {
        let text = open.repeat((manifest::MAX_MANIFEST_BYTES / open.len()) + 10);
        rejected_at(text.as_bytes(), "", "too large");
    }
}

#[test]
fn invalid_utf8_is_a_diagnostic_at_its_byte_offset() {
    let mut bytes = b"{\n  \"name\": \"ab".to_vec();
    bytes.push(0xff);
    bytes.extend_from_slice(b"\"\n}");
    let diagnostics = rejected_at(&bytes, "", "offset 15");
    assert_eq!((diagnostics[0].line, diagnostics[0].column), (Some(2), Some(14)));
    assert!(diagnostics[0].found.as_deref().unwrap().contains("0xff"));
}

#[test]
fn more_than_a_manifest_of_bytes_is_too_large_whatever_follows() {
    let bytes = vec![0u8; manifest::MAX_MANIFEST_BYTES + 1];
    rejected_at(&bytes, "", "too large");
}

fn cid_segment() -> serde_json::Value {
    json!({ "inputs": [-1], "sequence": [{ "operation": "op_multihash" }, { "operation": "op_cid" }] })
}

fn wf(segments: serde_json::Value) -> String {
    json!({ "name": "limits", "version": "0.1.0", "segments": segments }).to_string()
}

#[test]
fn version_is_checked_when_a_version_id_is_given_too() {
    let op = registry().get("op_multihash").unwrap().clone();
    let pinned = |version: &str| {
        wf(json!([{ "inputs": [-1], "sequence": [
            { "versionId": op.version_id, "version": version }, { "operation": "op_cid" }] }]))
    };
    rejected_at(pinned("not a requirement").as_bytes(), "/segments/0/sequence/0/version", "not a version requirement");
    rejected_at(pinned("^9").as_bytes(), "/segments/0/sequence/0/version", "disagree");
    validate(&pinned(&format!("={}", op.manifest.version)), &registry()).expect("an agreeing pair is fine");
}

#[test]
fn versions_npm_cannot_read_are_refused() {
    let long = format!("1.0.0-{}", "a".repeat(300));
    for version in ["9007199254740993.0.0", "0.9007199254740992.0", long.as_str()] {
        let text = json!({ "name": "v", "version": version, "segments": [cid_segment()] }).to_string();
        rejected_at(text.as_bytes(), "/version", "npm");
    }
    let text = json!({ "name": "v", "version": "9007199254740991.0.0", "segments": [cid_segment()] }).to_string();
    validate(&text, &registry()).expect("2^53 - 1 is fine");
}

#[test]
fn a_carriage_return_in_the_description_is_refused() {
    let text = json!({ "name": "d", "version": "0.1.0", "description": "a\r\nb", "segments": [cid_segment()] });
    rejected_at(text.to_string().as_bytes(), "/description", "control character");
}

/// 65 segments each chaining 128 op_collect took 5.6 s and 2.1 GB: the
/// type nesting grew with every step and was cloned at each one. Now the
/// workflow is over the operations limit, and within it the nesting stops
/// at its limit.
#[test]
fn deep_collect_chains_stop_at_the_limits() {
    let chain = |segments: i64| {
        let collects: Vec<_> = (0..128).map(|_| json!({ "operation": "op_collect" })).collect();
        let mut list = vec![json!({ "inputs": [-1], "sequence": [{ "operation": "op_utf8" }] })];
        list.extend((0..segments).map(|i| json!({ "inputs": [i], "sequence": collects })));
        wf(json!(list))
    };
    rejected_at(chain(64).as_bytes(), "/segments", "too many operations");
    let pointer = format!("/segments/1/sequence/{}", manifest::MAX_TYPE_NESTING);
    let diagnostics = rejected_at(chain(7).as_bytes(), &pointer, "nested too deeply");
    assert!(diagnostics.len() <= manifest::MAX_DIAGNOSTICS + 1);
}

#[test]
fn external_inputs_and_segment_inputs_are_bounded() {
    // 250,000 external inputs to one op_collect generated a 215 MB lib.rs.
    let mut many: Vec<i64> = vec![-1; 250_001];
    many[0] = 0;
    let text = wf(json!([
        { "inputs": [-1], "sequence": [{ "operation": "op_utf8" }] },
        { "inputs": many, "sequence": [{ "operation": "op_collect" }, { "operation": "op_concat" }] }
    ]));
    rejected_at(text.as_bytes(), "/segments/1/inputs", "too many inputs");

    // Under the per-segment bound, over the workflow's.
    let segment = |from: i64| {
        let mut inputs = vec![from];
        inputs.extend(std::iter::repeat_n(-1, manifest::MAX_SEGMENT_INPUTS - 1));
        json!({ "inputs": inputs, "sequence": [{ "operation": "op_collect" }, { "operation": "op_concat" }] })
    };
    let text = wf(json!([
        { "inputs": [-1], "sequence": [{ "operation": "op_utf8" }] },
        segment(0),
        segment(1)
    ]));
    rejected_at(text.as_bytes(), "/segments", "too many external inputs");
}

#[test]
fn operations_are_bounded_over_the_whole_workflow() {
    let chain: Vec<_> =
        (0..128).map(|i| json!({ "operation": if i % 2 == 0 { "op_utf8" } else { "op_encode" } })).collect();
    let segments: Vec<_> = (0..(manifest::MAX_OPERATIONS / 128 + 1) as i64)
        .map(|i| json!({ "inputs": [i - 1], "sequence": chain }))
        .collect();
    let text = wf(json!(segments));
    rejected_at(text.as_bytes(), "/segments", "too many operations");
}

#[test]
fn diagnostics_are_capped_with_a_count_of_the_rest() {
    let mut segment = serde_json::Map::new();
    segment.insert("inputs".into(), json!([-1]));
    segment.insert("sequence".into(), json!([{ "operation": "op_multihash" }]));
    for i in 0..5000 {
        segment.insert(format!("unknown{i}"), json!(1));
    }
    let text = wf(json!([segment]));
    let diagnostics = validate(&text, &registry()).unwrap_err();
    assert_eq!(diagnostics.len(), manifest::MAX_DIAGNOSTICS + 1);
    assert!(diagnostics.last().unwrap().message.contains("4900 more problem(s)"), "{:?}", diagnostics.last());
}

/// With `panic = "abort"` in the release profile, one panicking request
/// handler stopped the whole service before `CatchPanicLayer` could answer
/// 500. The `braid` binary must unwind (Wasm packages set abort themselves).
#[test]
fn the_release_binary_unwinds_on_panic() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml")).unwrap();
    let workspace: toml::Table = text.parse().unwrap();
    for profile in ["release", "dev"] {
        let panic = workspace.get("profile").and_then(|p| p.get(profile)).and_then(|p| p.get("panic"));
        assert!(panic.is_none_or(|p| p.as_str() == Some("unwind")), "profile.{profile}.panic = {panic:?}");
    }
}
