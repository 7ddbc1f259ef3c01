//! A trap in wasm-bindgen's JS glue: the call that trapped fails with an
//! `Error` and the module is reset, once no call of it is running (one may
//! be, when the caller's code it ran, a getter or a `Proxy` trap, called
//! the module again).

use super::glue::{identifier_at, top};

/// How the glue of a Node or web package makes an instance (at start, in
/// `initSync` and in `__wbg_reset_state`; `init` calls
/// `WebAssembly.instantiate`): through the `WebAssembly` it sees, which is
/// Braid's (`braidWebAssembly`).
const MAKES_INSTANCES: &str = "new WebAssembly.Instance(";

/// Whether the glue schedules a reset of its own (a crate called
/// `wasm_bindgen::handler::schedule_reinit`), which its call guard then
/// runs before the next call: wasm-bindgen's reset rather than Braid's,
/// which, not waiting for the outermost call, could reset the module under
/// a running one. No Braid crate calls it; a package whose glue does is
/// refused.
pub(super) fn schedules_reset(glue: &str) -> bool {
    glue.contains("__wbg_reinit_scheduled = true")
}

/// How wasm-bindgen's glue refuses to run a closure of an instance that
/// was reset. Only an operation's package has closures: its `execute` is
/// an async export, whose future's steps wasm-bindgen-futures runs as
/// closures from microtasks (a workflow's `run` settles its Promise at once).
const STALE_CLOSURE: &str = "throw new Error('Cannot invoke closure from previous WASM instance');";

/// A trap (an operation's bug, memory exhausted), or any exception that
/// unwinds through Wasm, leaves the instance broken: its stack pointer,
/// borrow flags and allocator stay mid-call, so every later call fails
/// ("recursive use of an object", then "memory access out of bounds") or,
/// worse, runs on corrupted memory. Every export is wrapped by
/// `glue/traps.js` as the glue takes an instance's exports: the failing
/// call throws (or, for those returning a Promise, rejects with) an
/// `Error` saying the module was reset, and `__wbg_reset_state`
/// (wasm-bindgen's, which makes objects of the old instance refuse use)
/// gives the next call a fresh instance. A bundler package cannot make
/// one (its Wasm is an ES module import, instantiated by the bundler):
/// there the module stays failed, every later call failing with the
/// trap's `Error`.
///
/// In a Node or web package the glue makes every instance itself, through
/// `WebAssembly`: the glue's `WebAssembly` is bound to Braid's, which
/// guards each instance's exports, and wasm-bindgen's code is left as it
/// is. A bundler package's entry hands the glue the exports of the instance
/// the bundler made through the glue's `__wbg_set_wasm`, which is bound to
/// a function of Braid's that guards them, then calls wasm-bindgen's.
/// Both are bindings of the glue's scope assigned at its top (a function
/// declaration's binding can be; an ES module's export of it follows), so
/// wasm-bindgen's text is left as it is but for a reset instance's closures
/// (below).
///
/// Not while another call of the module is running, though: a call can
/// run the caller's code (a getter of its inputs, a `Proxy` trap while an
/// error message is made), which can call the module again. Were the
/// instance reset then, the outer call would go on in the old instance
/// with the glue's allocator, memory views and tables of the new one,
/// writing into it where nothing was allocated. So a call inside another
/// that traps, or a `__wbg_reset_state()` called inside one (the glue's
/// `__wbg_reset_state` is bound to `braidReset`, which the package exports
/// under that name, wrapping wasm-bindgen's), fails that inner call (if it
/// trapped) and has the outermost call fail too and reset the module as it
/// returns. What the outer call did meanwhile stays in the old instance.
///
/// `Err` naming what is missing when the glue is not in the form guarded here: a package
/// whose glue could not be guarded is not shipped, rather than shipped
/// running on after a trap.
pub(super) fn guard_traps(glue: &str) -> Result<String, &'static str> {
    if !glue.contains("function addToExternrefTable0") {
        return Err("`function addToExternrefTable0`, which hands an export's failure back");
    }
    let (mut out, prelude) = if declares_function(glue, "__wbg_reset_state") {
        if !glue.contains(MAKES_INSTANCES) {
            return Err("how the glue makes an instance (`new WebAssembly.Instance(`)");
        }
        // A step of an async export's future left from a reset instance
        // does nothing (its Promise was rejected), rather than throw from
        // a microtask, which ends a Node process: the one edit of
        // wasm-bindgen's text, as the check is inside its closure code,
        // which nothing outside can reach. Glue making closures without
        // that check in this form is refused, not shipped throwing.
        let makes_closures = declares_function(glue, "makeMutClosure") || declares_function(glue, "makeClosure");
        if makes_closures && !glue.contains(STALE_CLOSURE) {
            return Err("how a closure of a reset instance refuses to run (`Cannot invoke closure from previous WASM instance`)");
        }
        let out = glue.replace(STALE_CLOSURE, "return;");
        (
            out,
            format!(
                "const braidResetState = __wbg_reset_state;\n{GUARD}const WebAssembly = braidWebAssembly;\n__wbg_reset_state = braidReset;\n"
            ),
        )
    } else if declares_function(glue, "__wbg_set_wasm") {
        (
            glue.to_string(),
            format!("const braidResetState = null;\n{GUARD}__wbg_set_wasm = braidGuardSetWasm(__wbg_set_wasm);\n"),
        )
    } else {
        return Err("`function __wbg_reset_state ()` (wasm-bindgen's `--experimental-reset-state-function`) or a bundler package's `__wbg_set_wasm`");
    };
    out.insert_str(top(&out), &prelude);
    Ok(out)
}

/// Whether `glue` declares `name` as a function in its own scope (not
/// indented), a binding [`guard_traps`] can assign.
fn declares_function(glue: &str, name: &str) -> bool {
    glue.lines().any(|line| {
        let line = line.strip_prefix("export ").unwrap_or(line);
        line.strip_prefix("function ").is_some_and(|rest| identifier_at(rest) == name)
    })
}

/// The JS side of [`guard_traps`], at the top of the glue (the module's
/// start runs a guarded call): Braid's own JavaScript, `glue/traps.js`.
pub(super) const GUARD: &str = include_str!("glue/traps.js");

#[cfg(test)]
mod tests {
    use super::*;

    /// wasm-bindgen 0.2.130's Node glue with a reset function (abridged).
    const NODE: &str = "function addToExternrefTable0(obj) {}\nfunction __wbg_reset_state () {\n    __wbg_instance_id++;\n    wasmInstance = new WebAssembly.Instance(wasmModule, imports);\n    wasm = wasmInstance.exports;\n}\nexports.__wbg_reset_state = __wbg_reset_state;\n\
        function real() {\n    if (state.instance !== __wbg_instance_id) {\n        throw new Error('Cannot invoke closure from previous WASM instance');\n    }\n}\nlet wasmInstance = new WebAssembly.Instance(wasmModule, imports);\nlet wasm = wasmInstance.exports;\n";

    #[test]
    fn every_instance_the_glue_makes_is_guarded_and_its_code_left_as_it_is() {
        let guarded = guard_traps(NODE).unwrap();
        // Braid's code first: the glue's `WebAssembly` Braid's, and its
        // `__wbg_reset_state` Braid's, which waits for the outermost call
        // and calls wasm-bindgen's.
        let prelude = format!(
            "const braidResetState = __wbg_reset_state;\n{GUARD}const WebAssembly = braidWebAssembly;\n__wbg_reset_state = braidReset;\n"
        );
        assert!(guarded.starts_with(&prelude), "{guarded}");
        // wasm-bindgen's code as it was, but that a closure of a reset
        // instance does nothing.
        let closure = "throw new Error('Cannot invoke closure from previous WASM instance');";
        assert_eq!(guarded[prelude.len()..], NODE.replace(closure, "return;"));

        // An ES module (a web package) the same way: its export of the
        // reset is of the binding, which is Braid's.
        let web = "function addToExternrefTable0(obj) {}\nexport function __wbg_reset_state () {\n    wasmInstance = new WebAssembly.Instance(wasmModule, imports);\n}\nexport { initSync };\n";
        assert_eq!(guard_traps(web).unwrap(), format!("{prelude}{web}"));

        // A bundler package cannot reset: the module stays failed. The
        // exports its entry hands over are guarded, then given to the glue.
        let bundler = "function addToExternrefTable0(obj) {}\nlet wasm;\nexport function __wbg_set_wasm(val) {\n    wasm = val;\n}\n";
        assert_eq!(
            guard_traps(bundler).unwrap(),
            format!(
                "const braidResetState = null;\n{GUARD}__wbg_set_wasm = braidGuardSetWasm(__wbg_set_wasm);\n{bundler}"
            )
        );
    }

    #[test]
    fn glue_in_another_form_is_refused_rather_than_shipped_unguarded() {
        // Neither function, or one that is not a function's binding.
        let bundler =
            "function addToExternrefTable0(obj) {}\nexport const __wbg_set_wasm = (v) => {\n    wasm = v;\n};\n";
        assert!(guard_traps(bundler).unwrap_err().contains("__wbg_set_wasm"));
        let indented = NODE.replace("function __wbg_reset_state", "    function __wbg_reset_state");
        assert!(guard_traps(&indented).unwrap_err().contains("__wbg_reset_state"));
        // Closures whose check of the instance is not the one replaced.
        let worded_otherwise = NODE.replace("from previous WASM instance", "of an old instance");
        let closures = format!("{worded_otherwise}function makeMutClosure(arg0, arg1, f) {{\n}}\n");
        assert!(guard_traps(&closures).unwrap_err().contains("previous WASM instance"));
        assert!(guard_traps(&format!("{NODE}function makeMutClosure(arg0, arg1, f) {{\n}}\n")).is_ok());
        let made_otherwise = NODE.replace("new WebAssembly.Instance(", "instantiate(");
        assert!(guard_traps(&made_otherwise).unwrap_err().contains("new WebAssembly.Instance("));
        assert!(schedules_reset(&format!("{NODE}function f() {{\n    __wbg_reinit_scheduled = true;\n}}\n")));
        assert!(!schedules_reset(NODE));
        assert!(guard_traps(&NODE.replace("function addToExternrefTable0", "function add"))
            .unwrap_err()
            .contains("addToExternrefTable0"));
    }
}
