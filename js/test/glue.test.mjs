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

test('objects.js: a brand refuses forged, freed, stale and busy objects; free() takes a pointer once', () => {
  const made = [];
  const { Workflow, brand, braidObject, setInstance } = load(
    'objects.js',
    'let __wbg_instance_id = 1;',
    `...(() => {
      class Workflow {}
      const brand = braidBrand('Workflow', (object, later) => { made.push(later); brand.made(object, 64, 64); });
      return { Workflow, brand };
    })(),
    braidObject,
    setInstance: (id) => { __wbg_instance_id = id; }`,
    { made },
  );
  const object = new Workflow();
  const record = brand.adopt(object, 8, 8);
  assert.deepEqual({ ...record }, { ptr: 8, instance: 1, held: 8, busy: false, later: 0 });
  assert.equal(brand.pointer(object), 8);
  // Anything the package did not make: a copy, an heir, a Proxy, another class's object.
  for (const forged of [{ ...object }, Object.create(object), new Proxy(object, {}), new Workflow(), {}]) {
    assert.throws(() => brand.pointer(forged), /^Error: this object is not a Workflow this package made$/);
  }
  for (const [value, what] of [[null, 'null'], [undefined, 'undefined'], [7, 'number']]) {
    assert.throws(() => braidObject(value), new RegExp(`^Error: this method was called on ${what}, not on an object the package made$`));
    assert.equal(brand.take(value), 0, 'free() of nothing frees nothing');
  }
  // Busy while a call given the caller's values runs: its code cannot use the object.
  assert.equal(brand.enter(object), 8);
  assert.throws(() => brand.pointer(object), /this Workflow is busy/);
  brand.leave(object);
  // Of another instance: refused, and free() frees nothing in this one.
  setInstance(2);
  assert.throws(() => brand.pointer(object), /^Error: Invalid stale object from previous Wasm instance$/);
  setInstance(1);
  // free(): the pointer once, then nothing; the object is refused after.
  assert.equal(brand.take(object), 8);
  assert.equal(brand.take(object), 0);
  assert.throws(() => brand.pointer(object), /^Error: this object was freed \(free\(\) was called\)$/);
  const old = new Workflow();
  brand.adopt(old, 16, 16);
  setInstance(3);
  assert.equal(brand.take(old), 0, 'a pointer of a reset instance is not freed in the new one');
  // Made when first used: `make` runs once, then the pointer is its.
  const later = new Workflow();
  brand.later(later);
  assert.equal(brand.fresh(later), true);
  assert.equal(brand.pointer(later), 64);
  assert.equal(brand.pointer(later), 64);
  assert.deepEqual([...made], [1]);
});

test("objects.js: the finalizer frees a record's pointer once, and skips one free() emptied", () => {
  let cleanup;
  const { braidFinalizationRegistry: registry } = load('objects.js', 'let __wbg_instance_id = 1;', 'braidFinalizationRegistry', {
    FinalizationRegistry: class {
      constructor(callback) {
        cleanup = callback;
      }
    },
  });
  const freed = [];
  registry((held) => freed.push(held));
  const record = { ptr: 8, held: 9 };
  cleanup(record);
  cleanup(record);
  cleanup({ ptr: 0, held: 10 });
  assert.deepEqual(freed, [9]);
});

/** fast-run.js over a memory of its own, `room` answering `__braid_room`. */
function fastRun(room = () => 1) {
  const memory = new WebAssembly.Memory({ initial: 1 });
  let next = 1024;
  const wasm = {
    __braid_room: (bytes) => room(bytes),
    __wbindgen_malloc: (length) => {
      const ptr = next;
      next += length;
      return ptr;
    },
  };
  const api = load('fast-run.js', 'let WASM_VECTOR_LEN = 0;', 'braidItems, braidTakeSlow, braidFits, braidPassBytes, vectorLength: () => WASM_VECTOR_LEN', {
    wasm,
    getUint8ArrayMemory0: () => new Uint8Array(memory.buffer),
    braidSupport,
  });
  return { ...api, memory };
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
  const { braidFits, braidPassBytes, vectorLength, memory } = fastRun((bytes) => (asked.push(bytes), room));
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
  const ptr = braidPassBytes(liar, 0);
  assert.deepEqual([...new Uint8Array(memory.buffer, ptr, 2)], [9, 8]);
  assert.equal(vectorLength(), 2);
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

/** traps.js around `exports`, a reset counted (or, as in a bundler package, no reset: `resets` false). */
function traps(exports, { resets = true } = {}) {
  const table = [];
  const api = load(
    'traps.js',
    `let resets = 0;\nconst braidResetState = ${resets ? '() => { resets++; }' : 'null'};\nlet wasm;`,
    'wasm: (wasm = braidGuardTraps(exports), wasm.__wbindgen_externrefs = { get: (i) => table[i] }, wasm), resets: () => resets, braidRejectPending',
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
      run: () => [0, 0, 0],
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
  const [index] = wasm.run(1);
  await assert.rejects(table[index], failed);
  // What the glue needs to hand a failure back still runs.
  assert.equal(wasm.__wbindgen_malloc(1, 1), 8);
  assert.equal(resets(), 0);
});

test('traps.js: an export handing back a Promise hands back a rejected one; an async one is rejected by a reset', async () => {
  const { wasm, table, resets, braidRejectPending } = traps({
    run: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
    execute: () => new Promise(() => {}),
  });
  const [index, error, isError] = wasm.run(1);
  assert.deepEqual([error, isError], [0, 0]);
  await assert.rejects(table[index], /^Error: the module trapped \(unreachable\) and was reset/);
  assert.equal(resets(), 1);
  const pending = wasm.execute(1);
  braidRejectPending();
  await assert.rejects(pending, /^Error: the module was reset \(after a trap, or by __wbg_reset_state\(\)\) before this call settled/);
});
