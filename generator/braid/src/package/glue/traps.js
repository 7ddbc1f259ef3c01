// Added by Braid (its package/glue/traps.js, put at the top of a package's
// glue by package/traps.rs): a call that traps resets the module. Every
// export of the module is wrapped by `braidGuardTraps` as the glue takes
// the instance's exports: in a Node or web package, every instance the
// glue makes is made through `braidWebAssembly`, which package/traps.rs
// binds as the glue's `WebAssembly`; a bundler package's entry hands the
// glue the exports of the instance the bundler made through its
// `__wbg_set_wasm`, which package/traps.rs binds to `braidGuardSetWasm`'s.
// The calls of the module running are counted (a call may run the caller's
// code, which may call the module again), and the outermost one fails and
// resets the module as it returns if one inside it trapped or asked for a
// reset (`braidReset`, which package/traps.rs binds as the glue's
// `__wbg_reset_state`, so the package exports it). A bundler
// package's module is an ES module import, which cannot be instantiated
// again: there the module stays failed, every later call failing with the
// trap's Error rather than running on an instance whose stack, borrows and
// allocator were left mid-call.
//
// From the glue: `wasm` (the current exports), `addToExternrefTable0`, and
// `braidResetState`, which package/traps.rs declares: wasm-bindgen's
// `__wbg_reset_state`, or null in a bundler package. Unit-tested as
// JavaScript by js/test/glue.test.mjs.
/* global wasm, addToExternrefTable0, braidResetState */
/* exported braidGuardTraps, braidWebAssembly, braidReset, braidOnReset, braidGuardSetWasm */
let braidDepth = 0;
let braidResetCause;
// Exports by their raw names: wasm-bindgen names a method's or a static
// method's `<class>_<name>` (`Workflow.stream` is `workflow_stream`).
const braidQuiet = new Set(['workflow_new', 'workflow_done', 'workflow_suspend', 'workflow_stream', 'stream_finish']);
// The reject functions of async exports' Promises not settled yet.
const braidPending = new Set();
const braidResetAsked = new Error('__wbg_reset_state() was called during the call');
const braidThen = ((then, apply) => (promise, resolved, rejected) => apply(then, promise, [resolved, rejected]))(Promise.prototype.then, Reflect.apply);
const braidDrop = (promise) => braidThen(promise, undefined, () => {});
// What else lets go of an instance when the module is reset (fast-run.js's
// views of its memory), each called before the reset.
const braidOnReset = [];
/**
 * The `WebAssembly` the glue of a Node or web package sees: the global's,
 * but for the instances it makes, whose exports are guarded (at start, in
 * `initSync` and `init`, and in every reset). The glue reads nothing of an
 * instance but its `exports`. An `init()` that resolves after `initSync()`
 * made the module's instance meanwhile fails, rather than have wasm-bindgen's
 * glue swap in a second instance under the objects made on the first.
 */
const braidWebAssembly = (() => {
    const real = globalThis.WebAssembly;
    class Instance {
        exports;
        constructor(module, imports) {
            this.exports = braidGuardTraps(new real.Instance(module, imports).exports);
        }
    }
    // An instance `init()` made, as the glue's own (its fields defined, so
    // no setter on a prototype is run).
    const adopt = (instance) => {
        if (wasm !== undefined) {
            throw new Error('initSync() made this module\'s instance while init() was loading it: init() makes no second one (the module is ready; init() is not needed after initSync())');
        }
        return { __proto__: Instance.prototype, exports: braidGuardTraps(instance.exports) };
    };
    const shadow = {
        __proto__: real,
        Instance,
        async instantiate(source, imports) {
            const made = await real.instantiate(source, imports);
            return made instanceof real.Instance ? adopt(made) : { module: made.module, instance: adopt(made.instance) };
        },
    };
    // Where the engine has none, neither has the glue (it then fetches the
    // bytes and calls `instantiate`).
    if (typeof real.instantiateStreaming === 'function') {
        shadow.instantiateStreaming = async (source, imports) => {
            const { module, instance } = await real.instantiateStreaming(source, imports);
            return { module, instance: adopt(instance) };
        };
    }
    return shadow;
})();
function braidGuardTraps(exports) {
    // Made here, not beside the function: this runs as the module loads.
    const promising = new Set(['workflow_run', 'workflow_runMany', 'workflow_runStream', 'workflow_next']);
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
    // What `init()` hands the caller: like an instance's own exports, it
    // cannot be changed.
    return Object.freeze(guarded);
}
/**
 * A bundler package's `__wbg_set_wasm` (wasm-bindgen's, `set`), which
 * package/traps.rs binds to what this returns: the exports the package's
 * entry hands over (the instance the bundler made) are guarded first.
 */
function braidGuardSetWasm(set) {
    return (exports) => set(braidGuardTraps(exports));
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
        const then = braidResetState === null ? 'as every later call will' : 'which resets the module as it returns';
        return new Error(`the module ${braidWhat(cause)} during another of its calls: this call failed, and so does that one, ${then}`, { cause });
    }
    const first = braidResetCause ?? cause;
    if (braidResetState === null) {
        // Failed for good: every later call comes here with the same cause.
        braidResetCause = first;
        braidRejectPending(new Error(`the module ${braidWhat(first)} before this call settled, and cannot be instantiated again (a bundler package)`, { cause: first }));
        return new Error(`the module ${braidWhat(first)}: this call failed, and so does every later call, as a bundler package imports its Wasm as an ES module, which cannot be instantiated again (load the page again, or use the web or Node package, which make a fresh instance)`, { cause: first });
    }
    braidResetCause = undefined;
    try {
        braidResetNow();
    } catch (failure) {
        // No fresh instance (out of memory): the broken one is not used again.
        braidResetCause = first;
        throw failure;
    }
    return new Error(`the module ${braidWhat(first)} and was reset: this call failed; the next call runs on a fresh instance (objects made before, such as a Workflow or a stream, can no longer be used)`, { cause: first });
}
/** The package's `__wbg_reset_state`: asked for during a call, the reset waits for the outermost call, which fails. */
function braidReset() {
    if (braidDepth > 0) {
        braidResetCause ??= braidResetAsked;
        return;
    }
    braidResetNow();
}
/** The module reset: Promises of async exports pending rejected, a fresh instance made. */
function braidResetNow() {
    braidRejectPending();
    for (const forget of braidOnReset) forget();
    braidResetState();
}
/** Rejects the Promises of async exports still running with `error`: the module is being reset. */
function braidRejectPending(error = new Error('the module was reset (after a trap, or by __wbg_reset_state()) before this call settled: the next call runs on a fresh instance')) {
    for (const reject of braidPending) reject(error);
    braidPending.clear();
}
function braidWhat(cause) {
    if (cause === braidResetAsked) return 'was asked to reset (__wbg_reset_state()) during this call';
    return cause instanceof WebAssembly.RuntimeError ? `trapped (${cause.message})` : `failed inside Wasm (${cause && cause.message})`;
}
