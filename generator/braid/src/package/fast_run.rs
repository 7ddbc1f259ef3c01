//! The typed entries the template makes for `run`, `runSync` and a new
//! `Workflow`'s first `next` (`__braid_run_typed_<kinds>`,
//! `__braid_next_fresh_typed_<kinds>`, each input a `Bytes` or a `String`):
//! found in the glue, which is called as wasm-bindgen wrote it, and the
//! readers of the inputs (`glue/fast-run.js`, whose `braidPassBytes`
//! copies each `Uint8Array` into Wasm memory and gives the entry its address
//! and length) put in the glue, for the package's API (`api.rs`) to call
//! them with inputs it read once and checked.

use super::glue::top;

/// How the glue declares the typed entry of `run` that the template makes
/// when every external input is a `Bytes` or a `String`, its name ending in
/// their kinds (`Workflow.__braid_run_typed_bs`, a static method of the
/// class, which the glue does not export).
const TYPED_RUN: &str = "static __braid_run_typed_";

/// How the glue declares the typed entry of a new `Workflow`'s first
/// `next`, made when one segment takes every external input, each a
/// `Bytes` or a `String`.
const TYPED_FRESH: &str = "static __braid_next_fresh_typed_";

/// The kinds (`b` a `Uint8Array`, `s` a string) of the glue's typed entries.
#[derive(Debug, Default, PartialEq)]
pub(super) struct TypedEntries {
    pub run: Option<String>,
    pub next: Option<String>,
}

/// `run`, `runSync` and `next` read their inputs through calls from Wasm
/// into JS, each hostile-safe (the Array, its length, each item, the bytes
/// located with the intrinsic getters): about 0.15 us of a call at 64 B.
/// When the template made typed entries (see [`TYPED_RUN`] and
/// [`TYPED_FRESH`]), the package's API reads the inputs in JS instead, once
/// (`braidItems`): an Array of exactly the inputs, each of its kind (a
/// `Uint8Array`, a string) and within the limits, with room for them in
/// Wasm memory (`braidFits`, as wasm-bindgen's allocator traps when it
/// fails), goes to the typed entry: each `Uint8Array` as the address and
/// length of its bytes, copied into Wasm memory by `braidPassBytes`
/// (reading the typed array's own slots, never a subclass's getters, as
/// wasm-bindgen's `passArray8ToWasm0` would), and each string as it is,
/// for wasm-bindgen's glue to copy. Anything else goes the general way,
/// reading what was read here (`braidReplay`): a getter or a `Proxy` trap
/// of the caller's runs once, and every error is the one the general path
/// gives.
///
/// `Ok` with the glue unchanged when it has no typed entry; `Err` saying
/// what is missing when a typed entry's name is not one the template
/// makes. The readers take braid-support's `braidSupport`, which the glue
/// binds (`glue::bind_support`).
pub(super) fn fast_run(glue: &str) -> Result<(String, TypedEntries), &'static str> {
    let mut out = glue.to_string();
    let typed = TypedEntries { run: typed_entry(&out, TYPED_RUN)?, next: typed_entry(&out, TYPED_FRESH)? };
    if typed != TypedEntries::default() {
        out.insert_str(top(&out), FAST_RUN_HELPERS);
    }
    Ok((out, typed))
}

/// The kinds of the typed entry declared by `declaration` (`bs`), if the
/// glue has one.
fn typed_entry(glue: &str, declaration: &str) -> Result<Option<String>, &'static str> {
    let Some(at) = glue.find(declaration) else {
        return Ok(None);
    };
    let rest = &glue[at + declaration.len()..];
    let kinds = &rest[..rest.find('(').ok_or("the typed entry's parameters")?];
    if kinds.is_empty() || !kinds.bytes().all(|k| k == b'b' || k == b's') {
        return Err("the typed entry's name");
    }
    Ok(Some(kinds.to_string()))
}

/// The JS side of [`fast_run`], put at the glue's top: Braid's own
/// JavaScript, `glue/fast-run.js`.
pub(super) const FAST_RUN_HELPERS: &str = include_str!("glue/fast-run.js");

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed entries as wasm-bindgen 0.2.130 writes them for a Node
    /// package (abridged), a workflow taking a `Bytes` and a `String` whose
    /// one segment takes a `Bytes`: static methods of the class, which the
    /// glue does not export.
    const TYPED: &str = "class Workflow {
    static __braid_next_fresh_typed_b(input0, input0_length) {
        let ret;
        __wbg_call_guard();
        ret = wasm.workflow___braid_next_fresh_typed_b(input0, input0_length);
        return takeFromExternrefTable0(ret[0]);
    }
    static __braid_run_typed_bs(input0, input0_length, input1) {
        const ptr2 = passStringToWasm0(input1, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len2 = WASM_VECTOR_LEN;
        let ret;
        __wbg_call_guard();
        ret = wasm.workflow___braid_run_typed_bs(input0, input0_length, ptr2, len2);
        return takeFromExternrefTable0(ret[0]);
    }
    static run(inputs) {
    }
}
function __wbg_reset_state () {
    __wbg_instance_id++;
}
exports.__wbg_reset_state = __wbg_reset_state;
";

    #[test]
    fn typed_entries_are_found_and_called_as_wasm_bindgen_wrote_them() {
        let glue = format!("/* @ts-self-types=\"./wf.d.ts\" */\n{TYPED}");
        let (fast, typed) = fast_run(&glue).unwrap();
        assert_eq!(typed, TypedEntries { run: Some("bs".into()), next: Some("b".into()) });
        // The readers first (after the types comment), as the module loads;
        // the rest of the glue as it was.
        let readers = format!("/* @ts-self-types=\"./wf.d.ts\" */\n{FAST_RUN_HELPERS}");
        assert!(fast.starts_with(&readers), "{fast}");
        assert_eq!(fast[readers.len()..], *TYPED);

        // Without a typed entry the glue is left as it is; with a name the
        // template does not make, refused.
        let plain = "class Workflow {\n    static run(inputs) {\n    }\n}\n";
        assert_eq!(fast_run(plain).unwrap(), (plain.to_string(), TypedEntries::default()));
        let refused = |from: &str, to: &str| fast_run(&TYPED.replace(from, to)).is_err();
        assert!(refused("typed_bs(", "typed_bx("));
        assert!(refused("typed_b(", "typed_("));
    }
}
