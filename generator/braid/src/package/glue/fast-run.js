// Added by Braid (its package/glue/fast-run.js, put at the top of the glue
// by package/fast_run.rs when the workflow has a typed entry): `run` and
// `runSync` read their inputs here, once. An Array of exactly the inputs,
// each of its kind and with room in Wasm memory, goes to the typed entry;
// anything else to the general path, which then reads what was read here.
//
// A typed entry takes each Uint8Array as the address and length of its
// bytes in Wasm memory, which `braidPassBytes` copied there, and each
// string as it is: the glue's function of the entry is called as
// wasm-bindgen wrote it.
//
// From the glue: `wasm` (the instance's exports, `__braid_room`,
// `__wbindgen_malloc` and `__wbindgen_free` among them), `getUint8ArrayMemory0()`, and
// `braidSupport`, braid-support's src/wasm.js (what every Braid package
// reads callers' bytes with), bound by glue.rs's `bind_support`, and
// traps.js's `braidOnReset`, which the glue has above this. Unit-tested as
// JavaScript by js/test/glue.test.mjs.
/* global wasm, getUint8ArrayMemory0, braidSupport, braidOnReset */
/* exported braidItems, braidTakeSlow, braidFits, braidPassBytes, braidLengths */
const braidBytes = Uint8Array;
const { isArray: braidIsArray, from: braidArrayFrom } = Array;
const { hasOwn: braidHasOwn } = Object;
// braid-support's MAX_BYTES and MAX_UNITS: over them, the general path says so.
const braidMaxBytes = 536870912;
const braidMaxUnits = 536870912;
// What the general path is to read when `braidItems` gives up, taken at once.
let braidSlow;
function braidTakeSlow() {
    const inputs = braidSlow;
    braidSlow = undefined;
    return inputs;
}
/** The `count` items of an Array, each read once; undefined (and `braidSlow` set) for anything else. */
function braidItems(inputs, count) {
    let isArray;
    try {
        isArray = braidIsArray(inputs);
    } catch {
        isArray = false; // a revoked Proxy: the general path says so
    }
    if (!isArray) {
        braidSlow = inputs;
        return undefined;
    }
    let length;
    try {
        length = inputs.length;
    } catch (error) {
        braidSlow = braidReplay(undefined, [], 'length', error);
        return undefined;
    }
    if (length !== count) {
        braidSlow = braidReplay(length, [], undefined, undefined);
        return undefined;
    }
    // Its slots made first, as the Array's own: what is written to them is
    // never handed to a setter of the caller's on `Array.prototype`, and is
    // read back with no getter of theirs run.
    const items = braidSlots(count);
    for (let i = 0; i < count; i++) {
        try {
            items[i] = inputs[i];
        } catch (error) {
            braidSlow = braidReplay(length, items, String(i), error);
            return undefined;
        }
    }
    return items;
}
/** An Array of `count` own slots, each undefined. */
function braidSlots(count) {
    switch (count) {
        case 1: return [undefined];
        case 2: return [undefined, undefined];
        case 3: return [undefined, undefined, undefined];
        default: return braidArrayFrom({ __proto__: null, length: count });
    }
}
/** An Array (to `Array.isArray`) giving what was read, and throwing again what threw, at key `failed`. */
function braidReplay(length, items, failed, error) {
    return new Proxy([], {
        get(_, key) {
            if (key === failed) throw error;
            if (key === 'length') return length;
            return braidHasOwn(items, key) ? items[key] : undefined;
        },
    });
}
/**
 * Whether `items` are of `kinds` (`b` a Uint8Array, `s` a string) within
 * the limits, with room for them in Wasm memory.
 */
function braidFits(items, kinds) {
    let bytes = 0;
    for (let i = 0; i < kinds.length; i++) {
        const item = items[i];
        if (kinds[i] === 'b') {
            const length = braidSupport.braidLengthOf(item);
            // An empty one may be of a detached buffer: the general path tells.
            if (length <= 0 || length > braidMaxBytes) return false;
            braidLengths[i] = length;
            bytes += length + 64;
        } else {
            if (typeof item !== 'string' || item.length > braidMaxUnits) return false;
            // wasm-bindgen copies a string into a byte per unit, then grows
            // the copy to three per unit unless it is ASCII.
            bytes += 4 * item.length + 64;
        }
    }
    braidKinds = kinds;
    if (wasm.__braid_room(bytes) !== 1) return false;
    // Making room may have grown Wasm memory, which detaches a view of the
    // module's own memory (the raw exports' `memory`): the general path
    // says so.
    for (let i = 0; i < kinds.length; i++) {
        if (kinds[i] === 'b' && braidSupport.braidLengthOf(items[i]) < braidLengths[i]) return false;
    }
    return true;
}
// The length of each Uint8Array `braidFits` took, by input.
const braidLengths = [];
// The kinds of the call `braidFits` last took: the inputs of it that
// `braidPassBytes` copied (at `braidTargets[i].ptr`) are freed if a later
// one fails.
let braidKinds = '';
// By input: the view of Wasm memory `braidPassBytes` last copied it into,
// let go of when the module is reset (with the instance's memory).
const braidTargets = [];
braidOnReset.push(() => {
    braidTargets.length = 0;
});
/**
 * Input `i`, a Uint8Array `braidFits` took, copied into Wasm memory: as many
 * bytes as it had then (`braidLengths[i]`, which it made room for), by
 * braid-support's `braidCopyInto` (which reads a typed array's own slots,
 * never a subclass's getters) into a view of exactly that many bytes
 * allocated with the module's `__wbindgen_malloc`, whose address is
 * returned: the typed entry takes them over (braid-support's
 * `passed_bytes`). Nothing of the caller's has run since `braidFits`, so
 * they are there.
 */
function braidPassBytes(bytes, i) {
    const length = braidLengths[i];
    const ptr = wasm.__wbindgen_malloc(length, 1) >>> 0;
    // The view of the previous call for this input if it is the same: a
    // call like the one before often gets the same memory.
    const memory = getUint8ArrayMemory0();
    let target = braidTargets[i];
    if (target === undefined || target.memory !== memory || target.ptr !== ptr || target.length !== length) {
        target = braidTargets[i] = { memory, ptr, length, view: new braidBytes(memory.buffer, ptr, length) };
    }
    if (!braidSupport.braidCopyInto(target.view, bytes, length)) {
        // Nothing is handed over: this input's bytes and those of the
        // call's inputs before it (copied first: arguments are evaluated
        // in order) are freed.
        wasm.__wbindgen_free(ptr, length, 1);
        for (let j = 0; j < i; j++) {
            if (braidKinds[j] === 'b') wasm.__wbindgen_free(braidTargets[j].ptr, braidLengths[j], 1);
        }
        throw new Error('an input changed while it was copied into Wasm memory');
    }
    return ptr;
}
