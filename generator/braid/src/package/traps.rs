//! A trap in wasm-bindgen's JS glue: the call that trapped fails with an
//! `Error` and the module is reset, once no call of it is running (one may
//! be, when the caller's code it ran, a getter or a `Proxy` trap, called
//! the module again).

use super::glue::top;

/// How wasm-bindgen's glue takes a new instance's exports, at start and in
/// `__wbg_reset_state` (Node: `wasmInstance`; web: `instance` at start).
const TAKE_EXPORTS: [&str; 2] = ["wasm = wasmInstance.exports;", "wasm = instance.exports;"];

/// How the glue declares its reset function (exported by web packages with
/// `export function`, by Node packages with `exports.__wbg_reset_state`).
pub(super) const RESET: &str = "function __wbg_reset_state () {\n";

/// How wasm-bindgen's glue refuses to run a closure of an instance that
/// was reset.
const STALE_CLOSURE: &str = "throw new Error('Cannot invoke closure from previous WASM instance');";

/// A trap (an operation's bug, memory exhausted), or any exception that
/// unwinds through Wasm, leaves the instance broken: its stack pointer,
/// borrow flags and allocator stay mid-call, so every later call fails
/// ("recursive use of an object", then "memory access out of bounds").
/// Every export is wrapped here: the failing call throws (or, for those
/// returning a Promise, rejects with) an `Error` saying the module was
/// reset, and `__wbg_reset_state` (wasm-bindgen's, which makes objects of
/// the old instance refuse use) gives the next call a fresh instance.
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
/// `None` when the glue has no reset function (a bundler package).
pub(super) fn guard_traps(glue: &str) -> Option<String> {
    if !glue.contains(RESET)
        || !glue.contains("function addToExternrefTable0")
        || !TAKE_EXPORTS.iter().any(|t| glue.contains(t))
    {
        return None;
    }
    let mut out = glue.to_string();
    for take in TAKE_EXPORTS {
        let exports = take.trim_start_matches("wasm = ").trim_end_matches(';');
        out = out.replace(take, &format!("wasm = braidGuardTraps({exports});"));
    }
    // A reset asked for during a call waits for the outermost one.
    out = out.replacen(
        RESET,
        &format!(
            "{RESET}    if (braidDepth > 0) {{\n        braidResetCause ??= braidResetAsked;\n        return;\n    }}\n    braidRejectPending();\n"
        ),
        1,
    );
    // A step of an async export's future left from a reset instance does
    // nothing (its Promise was rejected), rather than throw from a
    // microtask, which ends a Node process.
    out = out.replace(STALE_CLOSURE, "return;");
    out.insert_str(top(&out), GUARD_STATE);
    out.push_str(GUARD);
    Some(out)
}

/// The state of [`GUARD`], at the top of the glue: the module's start runs
/// a guarded call.
const GUARD_STATE: &str = "// Added by Braid (see braid package/traps.rs): how many calls of the
// module are running (a call may run the caller's code, which may call the
// module again), and why the outermost one is to fail and reset the module
// when it returns, if one inside it trapped or asked for a reset.
let braidDepth = 0;
let braidResetCause;
const braidQuiet = new Set(['workflow_new', 'workflow_done', 'workflow_suspend', 'stream', 'stream_finish']);
// The reject functions of async exports' Promises not settled yet.
const braidPending = new Set();
const braidResetAsked = new Error('__wbg_reset_state() was called during the call');
const braidThen = ((then, apply) => (promise, resolved, rejected) => apply(then, promise, [resolved, rejected]))(Promise.prototype.then, Reflect.apply);
const braidDrop = (promise) => braidThen(promise, undefined, () => {});
";

/// The JS side of [`guard_traps`], at the end of the glue.
const GUARD: &str = r#"
// Added by Braid: a call that traps resets the module (see braid package/traps.rs).
function braidGuardTraps(exports) {
    // Made here, not beside the function: this runs as the module loads.
    const promising = new Set(['run', 'runMany', 'runStream', 'workflow_next']);
    const guarded = {};
    for (const [name, value] of Object.entries(exports)) {
        if (typeof value !== 'function') {
            guarded[name] = value;
            continue;
        }
        const failed = (cause) => {
            const error = braidFailed(cause);
            // These hand their Promise back as a Result (braid-support's
            // `Promising`): a rejected one, in the table of the instance
            // the glue reads it from.
            if (promising.has(name)) {
                const rejected = Promise.reject(error);
                try {
                    return [addToExternrefTable0(rejected), 0, 0];
                } catch (failure) {
                    braidDrop(rejected);
                    throw failure;
                }
            }
            // A finalizer's free: nothing to report to.
            if (name.endsWith('_free')) return undefined;
            // A step of an async export's future, run from a microtask:
            // nothing to report to either (the export's Promise is rejected
            // by the reset, see `braidPending`); a Result of no error.
            if (name.startsWith('wasm_bindgen__convert__closures')) return [0, 0, 0];
            throw error;
        };
        // What the call gave, unless it is the outermost and one inside it
        // trapped: then its Promise (rejected, for all one knows) is
        // dropped, without being reported as unhandled.
        const gave = (ret) => {
            if (braidDepth !== 0 || braidResetCause === undefined) return ret;
            if (promising.has(name) && !ret[2]) braidDrop(wasm.__wbindgen_externrefs.get(ret[0]));
            return failed(braidResetCause);
        };
        // Of the export's own arity where it is small: V8 calls these
        // faster than one with rest parameters and a spread. Those that
        // take no value of the caller's, and so run none of its code
        // (wasm-bindgen's allocator and tables, the typed entries, `free`,
        // a Workflow's or a stream's methods but `next` and `update`),
        // have no call inside them to count.
        const quiet = name.startsWith('__') || name.includes('___braid_') || name.endsWith('_free') || braidQuiet.has(name);
        // wasm-bindgen's allocator and tables, the room check and `free`:
        // what the glue needs to hand back a failure, so never refused.
        const internal = name.startsWith('__wbindgen') || name.startsWith('__externref') || name === '__braid_room' || name.endsWith('_free');
        // A call made after one inside the same outermost call trapped fails
        // at once: the instance is broken.
        switch (quiet ? -value.length - 1 : value.length) {
            case -1: guarded[name] = function () { if (braidResetCause !== undefined && !internal) return failed(braidResetCause); try { return value(); } catch (cause) { return failed(cause); } }; break;
            case -2: guarded[name] = function (a) { if (braidResetCause !== undefined && !internal) return failed(braidResetCause); try { return value(a); } catch (cause) { return failed(cause); } }; break;
            case -3: guarded[name] = function (a, b) { if (braidResetCause !== undefined && !internal) return failed(braidResetCause); try { return value(a, b); } catch (cause) { return failed(cause); } }; break;
            case -4: guarded[name] = function (a, b, c) { if (braidResetCause !== undefined && !internal) return failed(braidResetCause); try { return value(a, b, c); } catch (cause) { return failed(cause); } }; break;
            case -5: guarded[name] = function (a, b, c, d) { if (braidResetCause !== undefined && !internal) return failed(braidResetCause); try { return value(a, b, c, d); } catch (cause) { return failed(cause); } }; break;
            case 0: guarded[name] = function () { if (braidResetCause !== undefined) return failed(braidResetCause); let ret; braidDepth++; try { ret = value(); } catch (cause) { braidDepth--; return failed(cause); } braidDepth--; return gave(ret); }; break;
            case 1: guarded[name] = function (a) { if (braidResetCause !== undefined) return failed(braidResetCause); let ret; braidDepth++; try { ret = value(a); } catch (cause) { braidDepth--; return failed(cause); } braidDepth--; return gave(ret); }; break;
            case 2: guarded[name] = function (a, b) { if (braidResetCause !== undefined) return failed(braidResetCause); let ret; braidDepth++; try { ret = value(a, b); } catch (cause) { braidDepth--; return failed(cause); } braidDepth--; return gave(ret); }; break;
            case 3: guarded[name] = function (a, b, c) { if (braidResetCause !== undefined) return failed(braidResetCause); let ret; braidDepth++; try { ret = value(a, b, c); } catch (cause) { braidDepth--; return failed(cause); } braidDepth--; return gave(ret); }; break;
            case 4: guarded[name] = function (a, b, c, d) { if (braidResetCause !== undefined) return failed(braidResetCause); let ret; braidDepth++; try { ret = value(a, b, c, d); } catch (cause) { braidDepth--; return failed(cause); } braidDepth--; return gave(ret); }; break;
            default: guarded[name] = function (...args) { if (braidResetCause !== undefined) return failed(braidResetCause); let ret; braidDepth++; try { ret = value(...args); } catch (cause) { braidDepth--; return failed(cause); } braidDepth--; return gave(ret); };
        }
        // An async export's Promise settles by steps of its future run from
        // microtasks: one rejected by the reset if the module is reset
        // before it settles (the steps of the old instance never run).
        if (name === 'execute') {
            const call = guarded[name];
            guarded[name] = function (...args) {
                try {
                    return braidSettleOnReset(call(...args));
                } catch (error) {
                    return Promise.reject(error);
                }
            };
        }
    }
    return guarded;
}
function braidSettleOnReset(promise) {
    return new Promise((resolve, reject) => {
        braidPending.add(reject);
        braidThen(promise, (value) => { braidPending.delete(reject); resolve(value); }, (error) => { braidPending.delete(reject); reject(error); });
    });
}
/** The Error of a call that failed in Wasm, the module reset now if no other call is running, or else when the outermost returns. */
function braidFailed(cause) {
    if (braidDepth > 0) {
        braidResetCause ??= cause;
        return new Error(`the module ${braidWhat(cause)} during another of its calls: this call failed, and so does that one, which resets the module as it returns`, { cause });
    }
    const first = braidResetCause ?? cause;
    braidResetCause = undefined;
    __wbg_reset_state();
    return new Error(`the module ${braidWhat(first)} and was reset: this call failed; the next call runs on a fresh instance (objects made before, such as a Workflow or a stream, can no longer be used)`, { cause: first });
}
/** Rejects the Promises of async exports still running: the module is being reset. */
function braidRejectPending() {
    const error = new Error('the module was reset (after a trap, or by __wbg_reset_state()) before this call settled: the next call runs on a fresh instance');
    for (const reject of braidPending) reject(error);
    braidPending.clear();
}
function braidWhat(cause) {
    if (cause === braidResetAsked) return 'was asked to reset (__wbg_reset_state()) during this call';
    return cause instanceof WebAssembly.RuntimeError ? `trapped (${cause.message})` : `failed inside Wasm (${cause && cause.message})`;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_export_resets_the_module_when_it_traps() {
        let glue = "function addToExternrefTable0(obj) {}\nfunction __wbg_reset_state () {\n    wasmInstance = new WebAssembly.Instance(wasmModule, imports);\n    wasm = wasmInstance.exports;\n}\nlet wasm = wasmInstance.exports;\n";
        let guarded = guard_traps(glue).unwrap();
        assert_eq!(guarded.matches("wasm = braidGuardTraps(wasmInstance.exports);").count(), 2, "{guarded}");
        assert!(guarded.contains("function braidGuardTraps(exports) {"), "{guarded}");
        // Asked for during a call, the reset waits for the outermost one.
        assert!(guarded.contains("function __wbg_reset_state () {\n    if (braidDepth > 0) {\n"), "{guarded}");
        let web = "function addToExternrefTable0(obj) {}\nexport function __wbg_reset_state () {\n    wasm = wasmInstance.exports;\n}\nfunction __wbg_finalize_init(instance, module) {\n    wasm = instance.exports;\n";
        assert!(guard_traps(web).unwrap().contains("wasm = braidGuardTraps(instance.exports);"));
        // A bundler package has no reset function: left as it is.
        assert_eq!(guard_traps("let wasm;\nexport function __wbg_set_wasm(val) {\n    wasm = val;\n}\n"), None);
    }
}
