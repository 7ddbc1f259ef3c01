//! A trap in wasm-bindgen's JS glue: the call that trapped fails with an
//! `Error` and the module is reset, once no call of it is running (one may
//! be, when the caller's code it ran, a getter or a `Proxy` trap, called
//! the module again).

use super::glue::top;

/// How wasm-bindgen's glue takes a new instance's exports, at start and in
/// `__wbg_reset_state` (Node: `wasmInstance`; web: `instance` at start),
/// or, in a bundler package, from the package's entry (`__wbg_set_wasm`).
const TAKE_EXPORTS: [&str; 3] = ["wasm = wasmInstance.exports;", "wasm = instance.exports;", "wasm = val;"];

/// How the glue declares its reset function (exported by web packages with
/// `export function`, by Node packages with `exports.__wbg_reset_state`).
pub(super) const RESET: &str = "function __wbg_reset_state () {\n";

/// How a bundler package's glue is given the instance's exports, by the
/// package's entry, which imports the Wasm as an ES module.
const SET_WASM: &str = "export function __wbg_set_wasm(val) {\n    wasm = val;\n}\n";

/// How wasm-bindgen's glue refuses to run a closure of an instance that
/// was reset.
const STALE_CLOSURE: &str = "throw new Error('Cannot invoke closure from previous WASM instance');";

/// A trap (an operation's bug, memory exhausted), or any exception that
/// unwinds through Wasm, leaves the instance broken: its stack pointer,
/// borrow flags and allocator stay mid-call, so every later call fails
/// ("recursive use of an object", then "memory access out of bounds") or,
/// worse, runs on corrupted memory. Every export is wrapped here: the
/// failing call throws (or, for those returning a Promise, rejects with)
/// an `Error` saying the module was reset, and `__wbg_reset_state`
/// (wasm-bindgen's, which makes objects of the old instance refuse use)
/// gives the next call a fresh instance. A bundler package cannot make
/// one (its Wasm is an ES module import, instantiated by the bundler):
/// there the module stays failed, every later call failing with the
/// trap's `Error`.
///
/// Not while another call of the module is running, though: a call can
/// run the caller's code (a getter of its inputs, a `Proxy` trap while an
/// error message is made), which can call the module again. Were the
/// instance reset then, the outer call would go on in the old instance
/// with the glue's allocator, memory views and tables of the new one,
/// writing into it where nothing was allocated. So a call inside another
/// that traps, or a `__wbg_reset_state()` called inside one, fails that
/// inner call (if it trapped) and has the outermost call fail too and
/// reset the module as it returns. What the outer call did meanwhile stays
/// in the old instance.
///
/// `None` when the glue takes no instance's exports in a form guarded here.
pub(super) fn guard_traps(glue: &str) -> Option<String> {
    if !glue.contains("function addToExternrefTable0") || !TAKE_EXPORTS.iter().any(|t| glue.contains(t)) {
        return None;
    }
    let mut out = glue.to_string();
    let reset = if glue.contains(RESET) {
        // A reset asked for during a call waits for the outermost one.
        out = out.replacen(
            RESET,
            &format!(
                "{RESET}    if (braidDepth > 0) {{\n        braidResetCause ??= braidResetAsked;\n        return;\n    }}\n    braidRejectPending();\n"
            ),
            1,
        );
        // A step of an async export's future left from a reset instance
        // does nothing (its Promise was rejected), rather than throw from
        // a microtask, which ends a Node process.
        out = out.replace(STALE_CLOSURE, "return;");
        "__wbg_reset_state"
    } else if glue.contains(SET_WASM) {
        "null"
    } else {
        return None;
    };
    for take in TAKE_EXPORTS {
        let exports = take.trim_start_matches("wasm = ").trim_end_matches(';');
        out = out.replace(take, &format!("wasm = braidGuardTraps({exports});"));
    }
    out.insert_str(top(&out), &format!("const braidResetState = {reset};\n{GUARD}"));
    Some(out)
}

/// The JS side of [`guard_traps`], at the top of the glue (the module's
/// start runs a guarded call): Braid's own JavaScript, `glue/traps.js`.
pub(super) const GUARD: &str = include_str!("glue/traps.js");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_export_resets_the_module_when_it_traps() {
        let glue = "function addToExternrefTable0(obj) {}\nfunction __wbg_reset_state () {\n    wasmInstance = new WebAssembly.Instance(wasmModule, imports);\n    wasm = wasmInstance.exports;\n}\nlet wasm = wasmInstance.exports;\n";
        let guarded = guard_traps(glue).unwrap();
        assert_eq!(guarded.matches("wasm = braidGuardTraps(wasmInstance.exports);").count(), 2, "{guarded}");
        assert!(guarded.starts_with("const braidResetState = __wbg_reset_state;\n"), "{guarded}");
        assert!(guarded.contains("function braidGuardTraps(exports) {"), "{guarded}");
        // Asked for during a call, the reset waits for the outermost one.
        assert!(guarded.contains("function __wbg_reset_state () {\n    if (braidDepth > 0) {\n"), "{guarded}");
        let web = "function addToExternrefTable0(obj) {}\nexport function __wbg_reset_state () {\n    wasm = wasmInstance.exports;\n}\nfunction __wbg_finalize_init(instance, module) {\n    wasm = instance.exports;\n";
        assert!(guard_traps(web).unwrap().contains("wasm = braidGuardTraps(instance.exports);"));
        // A bundler package cannot reset: the module stays failed.
        let bundler = "function addToExternrefTable0(obj) {}\nlet wasm;\nexport function __wbg_set_wasm(val) {\n    wasm = val;\n}\n";
        let guarded = guard_traps(bundler).unwrap();
        assert!(guarded.starts_with("const braidResetState = null;\n"), "{guarded}");
        assert!(
            guarded.contains("export function __wbg_set_wasm(val) {\n    wasm = braidGuardTraps(val);\n}\n"),
            "{guarded}"
        );
        // Glue that takes exports in another form is left as it is.
        assert_eq!(
            guard_traps(
                "function addToExternrefTable0(obj) {}\nexport function __wbg_set_wasm(v) {\n    wasm = v;\n}\n"
            ),
            None
        );
    }
}
