// Braid's own JavaScript in its packages' glue (generator/braid/src/package/glue/),
// tested as JavaScript: each file run in a context of its own with what it
// takes from wasm-bindgen's glue stubbed, and its functions called as the
// glue calls them. The packages built from them are tested as a whole by
// hostile.test.mjs, traps.test.mjs and the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { root } from '../lib/paths.mjs';
import * as braidSupport from '../../operations/support/src/wasm.js';

const source = (name) => readFileSync(`${root}/generator/braid/src/package/glue/${name}`, 'utf8');

/**
 * `name` run after `prelude` in a function of its own, as in the glue's
 * scope (in this realm, so values made here are what it checks), with
 * `globals` as free variables: what `expose` (an object literal's body of
 * its names) gives back.
 */
function load(name, prelude, expose, globals = {}) {
  const keys = Object.keys(globals);
  const body = `'use strict';\n${prelude}\n${source(name)}\nreturn { ${expose} };`;
  return new Function(...keys, body)(...keys.map((key) => globals[key]));
}

/**
 * api.js's `braidApi` over a stub of wasm-bindgen's glue: Wasm objects as
 * numbered pointers, whose making, views and frees are logged (`log`),
 * typed entries as given, and the instance id `setInstance` sets.
 */
function apiOver({ nextTyped, runTyped, kept = () => 0 } = {}) {
  const log = [];
  let id = 1;
  let count = 0;
  const make = (how) => () => (log.push(`${how} ${++count}`), count);
  // wasm-bindgen's methods, on a view of a pointer.
  const view = (ptr) => ({
    get done() {
      log.push(`done ${ptr}`);
      return false;
    },
    next: (inputs) => (log.push(`next ${ptr}`), Promise.resolve({ done: true, output: inputs })),
    suspend: () => new Uint8Array([ptr]),
    update: (chunk) => {
      log.push(`update ${ptr}`);
      if (typeof chunk === 'function') chunk();
    },
    finish: () => `finished ${ptr}`,
  });
  const free = (ptr) => log.push(`free ${ptr}`);
  const { braidApi } = load('api.js', '', 'braidApi');
  const items = (inputs, count) => (Array.isArray(inputs) && inputs.length === count ? [...inputs] : undefined);
  const api = braidApi({
    Workflow: { view, make: make('new'), finished: make('finished'), kept, resume: make('resumed'), free },
    Stream: { view, make: make('stream'), free },
    run: (inputs) => Promise.resolve(['general', inputs]),
    runSync: (inputs) => ['general', inputs],
    runMany: () => 'many',
    runStream: () => 'streamed',
    instance: () => id,
    runTyped,
    nextTyped,
    items,
    takeSlow: () => 'slow',
    fits: (values) => values.every((v) => typeof v === 'string'),
  });
  return { ...api, log, setInstance: (n) => { id = n; } };
}

test('api.js: methods refuse objects the package did not make, freed, stale and busy ones, with plain Errors', async () => {
  const { Workflow, Stream, stream, log, setInstance } = apiOver();
  const made = new Workflow();
  assert.deepEqual(log, [], 'no Wasm object until it is used');
  assert.equal(made.done, false);
  assert.deepEqual(log, ['new 1', 'done 1']);
  // Anything the package did not make: a copy, an heir, a Proxy, another class's object.
  const notOurs = /^Error: this object is not a Workflow this package made$/;
  for (const forged of [{ ...made }, Object.create(made), new Proxy(made, {}), stream(), {}]) {
    assert.throws(() => Workflow.prototype.next.call(forged, []), notOurs);
    assert.throws(() => Object.getOwnPropertyDescriptor(Workflow.prototype, 'done').get.call(forged), notOurs);
    Workflow.prototype.free.call(forged);
  }
  assert.throws(() => new Stream().finish(), /^Error: this object is not a Stream this package made$/);
  for (const [value, what] of [[null, 'null'], [undefined, 'undefined'], [7, 'number']]) {
    assert.throws(() => Workflow.prototype.free.call(value), new RegExp(`^Error: this method was called on ${what}, not on an object the package made$`));
  }
  // Busy while a call given the caller's values runs: its code cannot use the object.
  const chunk = new Proxy({}, {});
  const s = stream();
  let inner;
  s.update(() => {
    try {
      s.finish();
    } catch (error) {
      inner = error;
    }
  });
  assert.match(inner.message, /^this Stream is busy/);
  // free(): once, then refused; during its own call, when the call returns.
  made.free();
  made.free();
  assert.throws(() => made.done, /^Error: this object was freed \(free\(\) was called\)$/);
  assert.deepEqual(log.filter((l) => l.startsWith('free')), ['free 1']);
  const during = stream();
  during.update(() => {
    during.free();
    log.push('still running');
  });
  assert.deepEqual(log.slice(-2), ['still running', `free ${log.at(-3).split(' ')[1]}`]);
  assert.throws(() => during.update(chunk), /was freed/);
  // Of a reset instance: refused, and free() frees nothing in the new one.
  const old = new Workflow();
  assert.equal(old.done, false);
  setInstance(2);
  assert.throws(() => old.done, /^Error: Invalid stale object from previous Wasm instance$/);
  const before = log.length;
  old.free();
  assert.equal(log.length, before, 'nothing freed');
  // resume and stream() give the package's objects.
  const resumed = Workflow.resume(new Uint8Array([1]));
  assert.ok(resumed instanceof Workflow);
  assert.deepEqual([...resumed.suspend()], [Number(log.at(-1).split(' ')[1])]);
  // Nothing reachable from the classes makes an object of a pointer.
  assert.equal(Object.getPrototypeOf(Workflow), Function.prototype);
  assert.equal(Object.getPrototypeOf(Stream), Function.prototype);
  assert.deepEqual(Object.getOwnPropertyNames(Workflow).sort(), ['length', 'name', 'prototype', 'resume']);
  assert.deepEqual(Object.getOwnPropertyNames(Stream).sort(), ['length', 'name', 'prototype']);
});

test("api.js: a new Workflow's first next on typed inputs is one call; it adopts the workflow left in Wasm only when it did not finish", async () => {
  let step = { done: true, output: 'typed' };
  let ptr = 0;
  const calls = [];
  const { Workflow, log } = apiOver({
    nextTyped: { kinds: 's', call: (items) => (calls.push(items), step) },
    kept: () => ptr,
  });
  const fresh = new Workflow();
  assert.deepEqual(await fresh.next(['a']), { done: true, output: 'typed' });
  assert.deepEqual(calls, [['a']]);
  assert.deepEqual(log, [], 'no Wasm object kept');
  // Used again: a finished one made for it.
  assert.equal(fresh.done, false);
  assert.deepEqual(log, ['finished 1', 'done 1']);
  // Not finished, or failed: the workflow kept is adopted.
  step = { done: false };
  ptr = 8;
  const waiting = new Workflow();
  await waiting.next(['b']);
  assert.deepEqual(await waiting.next(['c']), { done: true, output: ['c'] });
  assert.equal(log.at(-1), 'next 8', 'the workflow kept in Wasm');
  // Inputs not of the typed kinds: the general way.
  assert.deepEqual(await new Workflow().next([42]), { done: true, output: [42] });
  // A getter of the inputs that frees the object: a rejection, nothing called.
  const freeing = new Workflow();
  const inputs = [];
  Object.defineProperty(inputs, 0, { get: () => (freeing.free(), 'd') });
  const before = calls.length;
  await assert.rejects(freeing.next(inputs), /was freed/);
  assert.equal(calls.length, before);
});

test('api.js: run and runSync take the typed entry for inputs of its kinds, the general path for anything else', async () => {
  const { run, runSync } = apiOver({ runTyped: { kinds: 'ss', call: ([a, b]) => `typed ${a}${b}` } });
  assert.equal(runSync(['a', 'b']), 'typed ab');
  assert.equal(await run(['a', 'b']), 'typed ab');
  assert.deepEqual(runSync(['a', 1]), ['general', ['a', 1]]);
  assert.deepEqual(runSync('x'), ['general', 'slow']);
  assert.deepEqual(await run(['a', 1]), ['general', ['a', 1]]);
  // What runSync would throw, run rejects with.
  const { run: failing } = apiOver({ runTyped: { kinds: 's', call: () => { throw new Error('typed failed'); } } });
  await assert.rejects(failing(['a']), /^Error: typed failed$/);
});

/** fast-run.js over a memory of its own, `room` answering `__braid_room`; what it frees, in `freed`. */
function fastRun(room = () => 1) {
  const memory = new WebAssembly.Memory({ initial: 1 });
  let next = 1024;
  const freed = [];
  const wasm = {
    __braid_room: (bytes) => room(bytes),
    __wbindgen_malloc: (length) => {
      const ptr = next;
      next += length;
      return ptr;
    },
    __wbindgen_free: (ptr, length, align) => freed.push([ptr, length, align]),
  };
  const braidOnReset = [];
  const api = load('fast-run.js', '', 'braidItems, braidTakeSlow, braidFits, braidPassBytes, braidLengths, braidTargets', {
    wasm,
    getUint8ArrayMemory0: () => new Uint8Array(memory.buffer),
    braidSupport,
    braidOnReset,
  });
  return { ...api, memory, freed, reset: () => braidOnReset.forEach((forget) => forget()) };
}

test('fast-run.js: inputs are read once; what is not an Array of exactly them goes to the general path as read', () => {
  const { braidItems, braidTakeSlow } = fastRun();
  const bytes = new Uint8Array([1, 2]);
  assert.deepEqual(braidItems([bytes, 'a'], 2), [bytes, 'a']);
  assert.equal(braidTakeSlow(), undefined, 'nothing for the general path');
  // Not an Array: given as it is.
  for (const value of ['text', null, { length: 1, 0: bytes }]) {
    assert.equal(braidItems(value, 1), undefined);
    assert.equal(braidTakeSlow(), value);
  }
  const revoked = Proxy.revocable([], {});
  revoked.revoke();
  assert.equal(braidItems(revoked.proxy, 1), undefined);
  assert.equal(braidTakeSlow(), revoked.proxy);
  // Another length: what was read, replayed.
  assert.equal(braidItems([1, 2, 3], 2), undefined);
  const replayed = braidTakeSlow();
  assert.ok(Array.isArray(replayed));
  assert.equal(replayed.length, 3);
  // A getter that throws ran once; the general path sees the items before it
  // and the same error at its index.
  let reads = 0;
  const boom = new Error('boom');
  const hostile = [bytes];
  Object.defineProperty(hostile, 1, { get: () => { reads++; throw boom; } });
  assert.equal(braidItems(hostile, 2), undefined);
  const slow = braidTakeSlow();
  assert.equal(slow[0], bytes);
  assert.throws(() => slow[1], (error) => error === boom);
  assert.equal(slow.length, 2);
  assert.equal(reads, 1, "the caller's getter runs once");
  assert.equal(braidTakeSlow(), undefined, 'taken once');
});

test('fast-run.js: only real Uint8Arrays and strings with room in Wasm memory take the typed entry; bytes copied as they were', () => {
  let room = 1;
  const asked = [];
  const { braidFits, braidPassBytes, braidLengths, braidTargets, memory, reset } = fastRun((bytes) => (asked.push(bytes), room));
  const bytes = new Uint8Array([5, 6, 7]);
  assert.equal(braidFits([bytes, 'hé'], 'bs'), true);
  assert.deepEqual(asked, [3 + 64 + 4 * 2 + 64]);
  // A subclass that lies about its length is read by the intrinsic getters.
  class Liar extends Uint8Array {
    get length() {
      return 1e9;
    }
    get byteLength() {
      return 1e9;
    }
  }
  const liar = new Liar([9, 8]);
  assert.equal(braidFits([liar], 'b'), true);
  // Its address and length are what the typed entry is given.
  const ptr = braidPassBytes(liar, 0);
  assert.deepEqual([...new Uint8Array(memory.buffer, ptr, 2)], [9, 8]);
  assert.equal(braidLengths[0], 2);
  // A reset lets go of the view of the old instance's memory.
  assert.equal(braidTargets.length, 1);
  reset();
  assert.equal(braidTargets.length, 0);
  // Anything else, empty bytes (perhaps detached) included, and no room: the general path.
  for (const [n, [items, kinds]] of [
    [[new Uint16Array(2)], 'b'],
    [[new DataView(new ArrayBuffer(2))], 'b'],
    [[[1, 2]], 'b'],
    [[new Uint8Array(0)], 'b'],
    [[new Proxy(bytes, {})], 'b'],
    [[bytes], 's'],
    [[new String('a')], 's'],
  ].entries()) {
    assert.equal(braidFits(items, kinds), false, `case ${n}`);
  }
  room = 0;
  assert.equal(braidFits([bytes], 'b'), false);
});

test("fast-run.js: an input whose bytes are gone when copied fails the call, and what the call's copies took is freed", () => {
  const { braidFits, braidPassBytes, freed } = fastRun();
  const first = new Uint8Array([1, 2]);
  // A call whose copies are handed over: nothing freed, then or later.
  assert.equal(braidFits([first, new Uint8Array([3])], 'bb'), true);
  braidPassBytes(first, 0);
  braidPassBytes(new Uint8Array([3]), 1);
  const second = new Uint8Array([4, 5, 6]);
  assert.equal(braidFits([first, second], 'bb'), true);
  const ptr = braidPassBytes(first, 0);
  // Its buffer detached after the check (as a view of Wasm memory is when
  // the memory grows).
  structuredClone(second.buffer, { transfer: [second.buffer] });
  assert.throws(() => braidPassBytes(second, 1), /^Error: an input changed while it was copied into Wasm memory$/);
  assert.deepEqual(freed, [[ptr + 2, 3, 1], [ptr, 2, 1]]);
});

/**
 * traps.js around `exports`, a reset counted (or, as in a bundler package,
 * no reset: `resets` false, the exports handed over as its entry does, to
 * the `__wbg_set_wasm` traps.rs binds), the first `failing` resets throwing.
 */
function traps(exports, { resets = true, failing = 0 } = {}) {
  const table = [];
  const guard = resets ? 'wasm = braidGuardTraps(given)' : 'braidGuardSetWasm((val) => { wasm = val; })(given), wasm';
  const api = load(
    'traps.js',
    `let resets = 0;\nlet failing = ${failing};\nconst braidResetState = ${resets ? "() => { resets++; if (failing-- > 0) throw new RangeError('no memory for a fresh instance'); }" : 'null'};\nlet wasm;\nconst given = { ...exports, __wbindgen_externrefs: { get: (i) => table[i] } };`,
    `wasm: (${guard}), resets: () => resets, braidReset, braidOnReset`,
    { exports, table, addToExternrefTable0: (value) => table.push(value) - 1 },
  );
  return { ...api, table };
}

test('traps.js: a call that traps fails with an Error and resets the module; other calls pass through', () => {
  const { wasm, resets } = traps({
    add: (a, b) => a + b,
    trap: (a) => {
      throw new WebAssembly.RuntimeError(`unreachable ${a}`);
    },
    memory: 'kept',
  });
  assert.equal(wasm.add(2, 3), 5);
  assert.equal(wasm.memory, 'kept');
  assert.throws(() => wasm.trap(1), (error) => {
    assert.match(error.message, /^the module trapped \(unreachable 1\) and was reset: this call failed; the next call runs on a fresh instance/);
    assert.ok(error.cause instanceof WebAssembly.RuntimeError);
    return true;
  });
  assert.equal(resets(), 1);
  assert.equal(wasm.add(1, 1), 2, 'the next call runs');
});

test("traps.js: a trap inside another call fails both, and the module resets once, as the outermost returns", () => {
  let inner;
  const { wasm, resets } = traps({
    // The caller's code (a getter of its inputs) calls the module again.
    outer: (a) => {
      inner = (() => {
        try {
          return wasm.trap(a);
        } catch (error) {
          return error;
        }
      })();
      assert.equal(resets(), 0, 'not reset while the outer call runs');
      assert.throws(() => wasm.add(1, 2), /during another of its calls/, 'a call after the trap fails at once');
      return 'outer result';
    },
    trap: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
    add: (a, b) => a + b,
  });
  assert.throws(() => wasm.outer(1), /^Error: the module trapped \(unreachable\) and was reset/);
  assert.match(inner.message, /^the module trapped \(unreachable\) during another of its calls: this call failed, and so does that one/);
  assert.equal(resets(), 1);
  assert.equal(wasm.add(1, 2), 3);
});

test('traps.js: where the module cannot be instantiated again (a bundler package), a trap fails every later call, Promises rejected', async () => {
  const { wasm, table, resets } = traps(
    {
      add: (a, b) => a + b,
      trap: () => {
        throw new WebAssembly.RuntimeError('unreachable');
      },
      workflow_run: () => [0, 0, 0],
      execute: () => new Promise(() => {}),
      __wbindgen_malloc: () => 8,
    },
    { resets: false },
  );
  assert.equal(wasm.add(2, 3), 5);
  const pending = wasm.execute(1);
  const failed = /^Error: the module trapped \(unreachable\): this call failed, and so does every later call, as a bundler package imports its Wasm as an ES module/;
  assert.throws(() => wasm.trap(), failed);
  await assert.rejects(pending, /^Error: the module trapped \(unreachable\) before this call settled, and cannot be instantiated again/);
  for (let i = 0; i < 3; i++) assert.throws(() => wasm.add(1, 1), failed, 'no later call runs');
  const [index] = wasm.workflow_run(1);
  await assert.rejects(table[index], failed);
  // What the glue needs to hand a failure back still runs.
  assert.equal(wasm.__wbindgen_malloc(1, 1), 8);
  assert.equal(resets(), 0);
});

test('traps.js: an export handing back a Promise hands back a rejected one; an async one is rejected by a reset', async () => {
  const { wasm, table, resets, braidReset } = traps({
    workflow_run: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
    execute: () => new Promise(() => {}),
  });
  const [index, error, isError] = wasm.workflow_run(1);
  assert.deepEqual([error, isError], [0, 0]);
  await assert.rejects(table[index], /^Error: the module trapped \(unreachable\) and was reset/);
  assert.equal(resets(), 1);
  const pending = wasm.execute(1);
  braidReset();
  assert.equal(resets(), 2);
  await assert.rejects(pending, /^Error: the module was reset \(after a trap, or by __wbg_reset_state\(\)\) before this call settled/);
});

test('traps.js: a reset that fails (no memory for a fresh instance) leaves the broken instance refused: every later call tries again', () => {
  let ran = 0;
  const { wasm, resets } = traps(
    {
      trap: () => {
        throw new WebAssembly.RuntimeError('unreachable');
      },
      add: (a, b) => (ran++, a + b),
    },
    { failing: 2 },
  );
  assert.throws(() => wasm.trap(), /^RangeError: no memory for a fresh instance/);
  assert.throws(() => wasm.add(1, 2), /^RangeError: no memory for a fresh instance/);
  assert.equal(ran, 0, 'nothing ran on the broken instance');
  assert.throws(() => wasm.add(1, 2), /^Error: the module trapped \(unreachable\) and was reset/);
  assert.equal(resets(), 3);
  assert.equal(wasm.add(1, 2), 3);
});

test("traps.js: the package's __wbg_reset_state, called inside a call, resets as the outermost call returns, which fails; what lets go of an instance runs before each reset", () => {
  let forgot = 0;
  const { wasm, resets, braidReset, braidOnReset } = traps({
    outer: () => {
      braidReset();
      assert.equal(resets(), 0, 'not reset while the outer call runs');
      return 'outer result';
    },
    add: (a, b) => a + b,
  });
  braidOnReset.push(() => forgot++);
  assert.throws(() => wasm.outer(), /^Error: the module was asked to reset \(__wbg_reset_state\(\)\) during this call and was reset/);
  assert.deepEqual([resets(), forgot], [1, 1]);
  assert.equal(wasm.add(1, 2), 3);
  braidReset();
  assert.deepEqual([resets(), forgot], [2, 2]);
});

// A module of two functions: `trap` (unreachable) and `one` (returns 1).
const TRAPPING_WASM = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x08, 0x02, 0x60, 0x00, 0x00, 0x60, 0x00, 0x01, 0x7f,
  0x03, 0x03, 0x02, 0x00, 0x01,
  0x07, 0x0e, 0x02, 0x04, 0x74, 0x72, 0x61, 0x70, 0x00, 0x00, 0x03, 0x6f, 0x6e, 0x65, 0x00, 0x01,
  0x0a, 0x0a, 0x02, 0x03, 0x00, 0x00, 0x0b, 0x04, 0x00, 0x41, 0x01, 0x0b,
]);

/** traps.js's `braidWebAssembly`, before the glue has an instance (`setWasm` gives it one), over `real` as the global's. */
function shadow(real = WebAssembly) {
  return load('traps.js', 'let resets = 0;\nconst braidResetState = () => { resets++; };\nlet wasm;', 'Wasm: braidWebAssembly, resets: () => resets, setWasm: (exports) => { wasm = exports; }', {
    globalThis: { WebAssembly: real },
    addToExternrefTable0: () => 0,
  });
}

test("traps.js: every instance made through the glue's WebAssembly has its exports guarded, however it is made", async () => {
  const { Wasm, resets } = shadow();
  const module = new WebAssembly.Module(TRAPPING_WASM);
  const trapped = /^Error: the module trapped \(unreachable\) and was reset/;
  const made = {
    'new Instance': new Wasm.Instance(module, {}),
    'instantiate of a Module': await Wasm.instantiate(module, {}),
    'instantiate of bytes': (await Wasm.instantiate(TRAPPING_WASM, {})).instance,
    instantiateStreaming: (await Wasm.instantiateStreaming(new Response(TRAPPING_WASM, { headers: { 'content-type': 'application/wasm' } }), {})).instance,
  };
  for (const [how, instance] of Object.entries(made)) {
    assert.ok(instance instanceof Wasm.Instance, how);
    assert.equal(instance.exports.one(), 1, how);
    assert.throws(() => instance.exports.trap(), trapped, how);
  }
  assert.equal(resets(), 4);
  assert.ok((await Wasm.instantiate(TRAPPING_WASM, {})).module instanceof WebAssembly.Module);
  // The rest is the global's.
  for (const name of ['Module', 'Memory', 'Table', 'RuntimeError', 'validate', 'compile']) assert.equal(Wasm[name], WebAssembly[name], name);
  // What `init()` hands back cannot be changed, as an instance's exports cannot.
  assert.ok(Object.isFrozen(made['new Instance'].exports));
});

test("traps.js: init() resolving after initSync() made the instance fails, making no second one; an engine without instantiateStreaming has none in the glue's WebAssembly", async () => {
  const { Wasm, setWasm } = shadow();
  const pending = Wasm.instantiate(TRAPPING_WASM, {});
  setWasm(new Wasm.Instance(new WebAssembly.Module(TRAPPING_WASM), {}).exports);
  await assert.rejects(pending, /^Error: initSync\(\) made this module's instance while init\(\) was loading it: init\(\) makes no second one/);
  // The constructor is initSync's and the reset's: they make the instance the glue takes.
  assert.ok(new Wasm.Instance(new WebAssembly.Module(TRAPPING_WASM), {}).exports.one() === 1);

  const { instantiateStreaming, ...older } = Object.getOwnPropertyDescriptors(WebAssembly);
  assert.equal(typeof instantiateStreaming.value, 'function');
  const { Wasm: without } = shadow(Object.defineProperties({}, older));
  assert.equal(typeof without.instantiateStreaming, 'undefined', 'wasm-bindgen then takes the bytes and calls instantiate');
  assert.equal((await without.instantiate(TRAPPING_WASM, {})).instance.exports.one(), 1);
});
