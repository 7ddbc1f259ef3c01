// The generated packages under hostile JS, in Node (the same cases run in
// Chromium, js/test/browser.test.mjs): detached buffers, revoked Proxies,
// throwing getters, Uint8Arrays lying about their length, huge claimed
// lengths. Each must throw or reject a plain Error saying what was expected
// (lying values are read for what they are), and afterwards the same
// instance and module still give the right answer, also after 5,000 such
// calls. Cases and checker: js/lib/hostile.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { LyingLength, calledBack, check, detached, forgedObjects, freedCalls, freedWhileRead, isPlainError, ownMemory, readsOnce, revoked, storm, subjects } from '../lib/hostile.mjs';
import { wfOut as out, opPkgs as ops } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const workflow = (name) => require(`${out}/${name}/pkg/node/wf_${name}.js`);
const operation = (op) => require(`${ops}/${op}/node/${op}.js`);

// One module of each package for the whole file: the storm runs on the
// modules the other tests already called with hostile values.
const mods = {
  cid: workflow('cidv1_from_bytes'),
  concatHex: workflow('concat_hex'),
  opMultihash: operation('op_multihash'),
  opConcat: operation('op_concat'),
  opCollect: operation('op_collect'),
};

/** A correct call of cidv1_from_bytes, for the checks that take one. */
const cidGood = () => {
  const bytes = new Uint8Array([1, 2, 3]);
  return { args: () => [[bytes]], output: mods.cid.runSync([bytes]) };
};

for (const subject of subjects(mods)) {
  test(`${subject.label}: every hostile argument gives an Error, lying ones their real value`, async () => {
    assert.deepEqual(await check(subject), []);
  });
}

for (const subject of subjects(mods)) {
  test(`${subject.label}: 5,000 hostile calls, then the same instance and module answer right`, async () => {
    assert.deepEqual(await storm(subject, 5000), []);
  });
}

test('methods of a freed Workflow throw an Error, 10,000 times each, and the module still answers', async () => {
  assert.deepEqual(await freedCalls(mods.cid, cidGood()), []);
});

test('objects the package did not make are refused before Wasm, and free() of one frees nothing', async () => {
  assert.deepEqual(await forgedObjects(mods.cid, cidGood()), []);
});

test('run, runSync and next read each key of the inputs Array once, right or wrong', async () => {
  assert.deepEqual(await readsOnce(mods.cid, cidGood()), []);
});

test('a Workflow freed by a getter of its inputs is refused, with nothing copied for it', async () => {
  assert.deepEqual(await freedWhileRead(mods.cid, cidGood()), []);
});

test('caller code run by a call that frees its object or resets the module: plain Errors, and nothing used after it was freed', async () => {
  assert.deepEqual(await calledBack(mods.cid, cidGood()), []);
});

test("an operation's execute rejects when the module is reset before it settles (from its config getter, or by a direct reset), and the process goes on", async () => {
  // execute's future runs in microtasks: a reset asked for there fails it,
  // and nothing is thrown from a microtask (which would end the process).
  const op = mods.opMultihash;
  const bytes = new Uint8Array([1, 2, 3]);
  const expected = op.executeSync(bytes, { hasher: 'sha2-256' });
  const config = { get hasher() { op.__wbg_reset_state(); return 'sha2-256'; } };
  await assert.rejects(op.execute(bytes, config), (e) => isPlainError(e) && /was reset/.test(e.message));
  // Reset while no call runs: a pending execute rejects too.
  const pending = op.execute(bytes, { hasher: 'sha2-256' });
  op.__wbg_reset_state();
  await assert.rejects(pending, (e) => isPlainError(e) && /was reset .* before this call settled/.test(e.message));
  assert.deepEqual(await op.execute(bytes, { hasher: 'sha2-256' }), expected);
});

test("a view of the module's own memory as an input gives a plain Error, not a TypeError or a reset (web package)", async () => {
  const dir = `${out}/cidv1_from_bytes/pkg/web`;
  const web = await import(`${dir}/wf_cidv1_from_bytes.js`);
  const { memory } = web.initSync({ module: readFileSync(`${dir}/wf_cidv1_from_bytes_bg.wasm`) });
  const bytes = new Uint8Array([1, 2, 3]);
  assert.deepEqual(await ownMemory(web, memory, { args: () => [[bytes]], output: web.runSync([bytes]) }), []);
});

test('a Uint8Array over a SharedArrayBuffer that another thread grows is copied no further than its length', async () => {
  // A length-tracking view: its length is read, then the bytes copied, and
  // the buffer may grow in between. 256 KiB of one-byte steps, in a worker.
  const sab = new SharedArrayBuffer(1 << 16, { maxByteLength: (1 << 16) + (1 << 18) });
  const view = new Uint8Array(sab);
  const grower = new Worker('const { workerData: sab } = require("node:worker_threads"); while (sab.byteLength < sab.maxByteLength) sab.grow(sab.byteLength + 1);', { eval: true, workerData: sab });
  const calls = [() => mods.cid.runSync([view]), () => mods.cid.run([view]), () => new mods.cid.Workflow().next([view]), () => mods.cid.runMany([[view]]), () => mods.cid.stream().update(view)];
  const bytes = new Uint8Array([1, 2, 3]);
  const expected = mods.cid.runSync([bytes]);
  const problems = [];
  let made = 0;
  try {
    while (sab.byteLength < sab.maxByteLength && problems.length < 5) {
      try {
        await calls[made++ % calls.length]();
      } catch (error) {
        problems.push(`call ${made}: ${error?.constructor?.name}: ${error?.message}`);
      }
    }
  } finally {
    await grower.terminate();
  }
  assert.deepEqual(problems, []);
  assert.ok(made > calls.length, `only ${made} calls`);
  assert.equal(mods.cid.runSync([bytes]), expected);
  assert.equal((await new mods.cid.Workflow().next([bytes])).output, expected);
});

test('a Uint8Array over the 512 MiB limit gives an Error, and the module goes on', () => {
  // Its pages are never touched: refused before any copy.
  const big = new Uint8Array((512 << 20) + 1);
  const limit = /input 0: expected Uint8Array, found a Uint8Array larger than the limit of 536870912 bytes or than Wasm memory has room for/;
  assert.throws(() => mods.cid.runSync([big]), (e) => isPlainError(e) && limit.test(e.message));
  assert.throws(() => mods.opMultihash.executeSync(big), (e) => isPlainError(e) && /op_multihash input 0: expected Uint8Array, found a Uint8Array larger/.test(e.message));
  const bytes = new Uint8Array([1, 2, 3]);
  assert.equal(mods.cid.runSync([bytes.subarray(1)]), mods.cid.runSync([new Uint8Array([2, 3])]));
});

test('Workflow.resume reads its state like any input', async () => {
  const { Workflow } = workflow('salted_cid');
  const wf = new Workflow();
  await wf.next(['salt:']);
  const state = wf.suspend();
  for (const [value, found] of [[detached(), /found a Uint8Array whose ArrayBuffer is detached/], [revoked(), /found a revoked Proxy/]]) {
    assert.throws(() => Workflow.resume(value), (e) => isPlainError(e) && /Workflow.resume state: expected Uint8Array, /.test(e.message) && found.test(e.message));
  }
  // A lying length changes nothing: the real bytes are read.
  const bytes = new Uint8Array(1000).map((_, i) => (i * 31 + 7) & 0xff);
  const expected = (await Workflow.resume(state).next([bytes])).output;
  assert.equal((await Workflow.resume(new LyingLength(state.slice().buffer)).next([bytes])).output, expected);
});

test('suspend() refuses a state that resume() would refuse, and only that', async () => {
  const { Workflow } = workflow('salted_cid');
  const suspended = async (salt) => {
    const wf = new Workflow();
    await wf.next([salt]);
    return wf.suspend();
  };
  // Just under the limit: suspends, and the state resumes.
  const fits = await suspended('s'.repeat((64 << 20) - 256));
  assert.equal(Workflow.resume(fits).done, false);
  // Over it (the probe's 64 MiB + 16 B salt): suspend refuses, saying why.
  const over = await suspended('s'.repeat((64 << 20) + 16)).then((state) => ({ state }), (error) => ({ error }));
  if (over.state) {
    let resumed;
    try {
      Workflow.resume(over.state);
      resumed = 'resume() accepts it';
    } catch (e) {
      resumed = `resume() refuses it: ${e.message}`;
    }
    assert.fail(`suspend() gave a state of ${over.state.length} bytes; ${resumed}`);
  }
  assert.ok(isPlainError(over.error), String(over.error));
  assert.match(over.error.message, /codec: encode: .*more than the 64 MiB/);
});

// A sloppy-mode function can be reached by anyone who sees it in a stack
// trace (`Error.prepareStackTrace`'s `getFunction()`) and has own `caller`
// and `arguments`; Braid makes each Node package's glue strict, its
// 'use strict' the glue's first statement (package/glue.rs `strict`), the
// JavaScript it binds there (braid-support's namespaces) included.
test("every Node package's glue is strict mode: 'use strict' stays its first statement", () => {
  for (const [name, mod] of Object.entries(mods)) {
    const functions = Object.values(mod).filter((v) => typeof v === 'function');
    assert.ok(functions.length > 0, name);
    for (const f of functions) assert.ok(!Object.hasOwn(f, 'caller') && !Object.hasOwn(f, 'arguments'), `${name}.${f.name} is strict`);
  }
});

test("setters and getters the caller puts on Object.prototype, Array.prototype or FinalizationRegistry.prototype are never run with the package's own objects", async () => {
  const wf = mods.cid;
  const bytes = new Uint8Array([1, 2, 3]);
  const expected = wf.runSync([bytes]);
  // Every property the package's objects (views of Wasm objects, their
  // state, the inputs read) have or had, on the prototypes of all objects
  // and Arrays; what ran is noted in a string (an Array would run them).
  // The test runner's own Arrays run those of Array.prototype too: there
  // what is noted is a setter handed the input.
  const keys = [
    ...['__wbg_ptr', '__wbg_inst', 'of', 'held', 'view', 'instance', 'busy', 'freed', 'later', 'ptr'].map((key) => [Object.prototype, key]),
    [Array.prototype, '0'],
    [Array.prototype, '1'],
  ];
  const saved = keys.map(([prototype, key]) => Object.getOwnPropertyDescriptor(prototype, key));
  const register = FinalizationRegistry.prototype.register;
  let handed = '';
  for (const [prototype, key] of keys) {
    const noted = (value) => prototype !== Array.prototype || value === bytes;
    Object.defineProperty(prototype, key, {
      configurable: true,
      get() {
        if (noted()) handed += ` get ${key}`;
        return undefined;
      },
      set(value) {
        if (noted(value)) handed += ` set ${key}`;
        Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
      },
    });
  }
  FinalizationRegistry.prototype.register = function (...args) {
    handed += ' register';
    return Reflect.apply(register, this, args);
  };
  let outputs;
  try {
    const used = new wf.Workflow();
    const done = used.done;
    const step = await used.next([bytes]);
    const resumed = wf.Workflow.resume(new wf.Workflow().suspend());
    const s = wf.stream();
    s.update(bytes);
    const streamed = s.finish();
    s.free();
    used.free();
    const ran = await wf.runStream((async function* () { yield bytes; })());
    outputs = [done, step.output, resumed.done, streamed, ran, wf.runSync([bytes]), (await new wf.Workflow().next([bytes])).output];
  } finally {
    keys.forEach(([prototype, key], i) => {
      if (saved[i]) Object.defineProperty(prototype, key, saved[i]);
      else delete prototype[key];
    });
    FinalizationRegistry.prototype.register = register;
  }
  assert.equal(handed, '');
  assert.deepEqual(outputs, [false, expected, false, expected, expected, expected, expected]);
});

test("a stream runStream made is the package's too: the module reset while it runs, it frees nothing of the new instance", async () => {
  const wf = mods.cid;
  const bytes = (text) => new TextEncoder().encode(text);
  let made;
  const source = (async function* () {
    yield bytes('a');
    await null;
    // No call of the module running: reset now; then a stream made in the
    // new instance while runStream's, of the old one, is held.
    wf.__wbg_reset_state();
    made = wf.stream();
    yield bytes('b');
  })();
  await assert.rejects(wf.runStream(source), (e) => isPlainError(e));
  const after = wf.stream();
  made.update(bytes('made'));
  after.update(bytes('after'));
  assert.deepEqual([made.finish(), after.finish()], [wf.runSync([bytes('made')]), wf.runSync([bytes('after')])]);
});
