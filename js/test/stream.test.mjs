// Streaming in Node: `stream()` and `runStream(source)` of the workflows
// whose first step has an incremental form give what `runSync` gives for
// the whole input, however it is cut (1 byte, odd sizes, 1 MiB, empty), from
// every kind of source; every bad use is an Error and leaves the stream, and
// the module, usable. Workflows that cannot stream export neither.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { cid } from '../lib/reference.mjs';
import { root, wfOut as out } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const load = (name) => require(`${out}/${name}/pkg/node/wf_${name}.js`);
const MiB = 1 << 20;

/** `n` bytes of a pattern with no short period. */
function pattern(n, seed = 1) {
  const bytes = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

/** `bytes` cut into chunks of `size` (the last one shorter). */
function* cut(bytes, size) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** The output of `stream()` fed `chunks`. */
function streamed(mod, chunks) {
  const s = mod.stream();
  try {
    for (const chunk of chunks) s.update(chunk);
    return s.finish();
  } finally {
    s.free();
  }
}

const STREAMING = ['cidv1_from_bytes', 'cidv1_sha2_256'];

test('stream() gives what runSync gives, for chunks of 1 byte, odd sizes, 1 MiB and an empty input', () => {
  for (const name of STREAMING) {
    const mod = load(name);
    for (const n of [0, 1, 1000, 3 * MiB + 5]) {
      const input = pattern(n, n + 1);
      const whole = mod.runSync([input]);
      const sizes = n <= 1000 ? [1, 7, 64, 1023, MiB] : [4093, 65537, MiB, 3 * MiB + 5];
      for (const size of sizes) assert.equal(streamed(mod, cut(input, size)), whole, `${name}, ${n} bytes in chunks of ${size}`);
      // Empty chunks anywhere change nothing; no chunk at all is the empty input.
      assert.equal(streamed(mod, [new Uint8Array(0), ...cut(input, 333), new Uint8Array(0)]), whole, `${name}, ${n} bytes with empty chunks`);
    }
    assert.equal(streamed(mod, []), mod.runSync([new Uint8Array(0)]), `${name}: no chunk`);
  }
  // And the reference implementation agrees.
  const input = pattern(100_000);
  assert.equal(streamed(load('cidv1_from_bytes'), cut(input, 4099)), cid(input));
});

test('a chunk is read where it lies: a view into a larger buffer, a Buffer, a Uint8Array subclass', () => {
  const mod = load('cidv1_from_bytes');
  const input = pattern(50_000);
  const whole = mod.runSync([input]);
  const big = new Uint8Array(input.length + 100);
  big.set(input, 50);
  const view = new Uint8Array(big.buffer, 50, input.length);
  assert.equal(streamed(mod, [view]), whole);
  assert.equal(streamed(mod, [Buffer.from(input.subarray(0, 10)), Buffer.from(input.subarray(10))]), whole);
  class Lying extends Uint8Array {
    get length() {
      return 3;
    }
  }
  assert.equal(streamed(mod, [Lying.from(input)]), whole);
  // A chunk of more than the 1 MiB piece copied into Wasm at a time.
  const large = pattern(5 * MiB + 3);
  assert.equal(streamed(mod, [large]), mod.runSync([large]));
});

test('runStream reads a Node Readable, a ReadableStream, a Blob, a File and an async iterable', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-stream-'));
  for (const name of STREAMING) {
    const mod = load(name);
    for (const n of [0, 1, 3 * MiB + 5]) {
      const input = pattern(n, 7);
      const whole = mod.runSync([input]);
      const file = join(dir, `${n}.bin`);
      writeFileSync(file, input);
      assert.equal(await mod.runStream(createReadStream(file, { highWaterMark: 65_537 })), whole, `${name}: file of ${n} bytes`);
      assert.equal(await mod.runStream(Readable.from(cut(input, 1000))), whole, `${name}: Readable of ${n} bytes`);
      const chunks = [...cut(input, 99_991)];
      const web = new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      });
      assert.equal(await mod.runStream(web), whole, `${name}: ReadableStream of ${n} bytes`);
      assert.equal(await mod.runStream(new Blob([input])), whole, `${name}: Blob of ${n} bytes`);
      assert.equal(await mod.runStream(new File([input], 'input.bin')), whole, `${name}: File of ${n} bytes`);
      assert.equal(
        await mod.runStream((async function* () {
          yield* cut(input, 1);
        })()),
        whole,
      );
    }
  }
  assert.equal(
    await load('cidv1_from_bytes').runStream(createReadStream(join(root, 'workflows/samples/sample.txt'))),
    cid(readFileSync(join(root, 'workflows/samples/sample.txt'))),
  );
});

test('bad use of a stream is an Error, and the stream and module stay usable', () => {
  const mod = load('cidv1_from_bytes');
  const input = pattern(10_000);
  const whole = mod.runSync([input]);
  const s = mod.stream();
  s.update(input.subarray(0, 5000));
  const detached = new Uint8Array(new ArrayBuffer(8));
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  const bad = [
    ['a string', /cidv1_from_bytes stream chunk: expected Uint8Array, found a string/],
    [42, /expected Uint8Array, found a number/],
    [undefined, /expected Uint8Array, found undefined/],
    [null, /found null/],
    [[1, 2, 3], /found an Array/],
    [new Int8Array(4), /found an Int8Array/],
    [new Uint8Array(4).buffer, /found an object of class ArrayBuffer/],
    [new DataView(new ArrayBuffer(4)), /found an object of class DataView/],
    [new Proxy(new Uint8Array(4), {}), /found a Proxy or other object that is not a real Uint8Array/],
    [detached, /found a Uint8Array whose ArrayBuffer is detached/],
  ];
  for (const [chunk, message] of bad) {
    assert.throws(
      () => s.update(chunk),
      (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message),
      String(message),
    );
  }
  // Nothing of the bad chunks was taken.
  s.update(input.subarray(5000));
  assert.equal(s.finish(), whole);
  assert.throws(() => s.update(input), /cidv1_from_bytes: this stream is finished; call stream\(\) again/);
  assert.throws(() => s.finish(), /this stream is finished/);
  s.free();
  s.free();
  assert.throws(() => s.update(input), /this object was freed/);
  assert.throws(() => s.finish(), /this object was freed/);
  // Methods called on something else: the package's own Error, not the glue's TypeError.
  const live = mod.stream();
  for (const self of [null, undefined, 7, {}]) {
    for (const method of ['finish', 'update', 'free']) {
      const call = () => live[method].call(self, input);
      if (method === 'free' && self !== null && self !== undefined && typeof self === 'object') {
        assert.doesNotThrow(call, 'free() of a plain object does nothing');
        continue;
      }
      assert.throws(call, (e) => e.constructor === Error && /called on|freed|not a Stream this package made/.test(e.message), `${method}.call(${self})`);
    }
  }
  live.update(input);
  assert.equal(live.finish(), whole);
  // Thousands of bad calls leave the module as it was.
  const t = mod.stream();
  for (let i = 0; i < 5000; i++) assert.throws(() => t.update(i % 2 ? detached : 'x'));
  for (let i = 0; i < 5000; i++) {
    const u = mod.stream();
    u.finish();
    assert.throws(() => u.update(input));
    u.free();
  }
  t.update(input);
  assert.equal(t.finish(), whole);
  t.free();
  assert.equal(mod.runSync([input]), whole);
});

test('runStream rejects a bad source, a bad chunk and a failing source with an Error, and cancels the source', async () => {
  const mod = load('cidv1_from_bytes');
  for (const [source, message] of [
    [undefined, /runStream: expected a ReadableStream, a Blob or File, or an async iterable of Uint8Array \(such as a Node Readable\), found undefined/],
    ['text', /found a string/],
    [new Uint8Array(3), /found a Uint8Array/],
    [[new Uint8Array(3)], /found an Array/],
    [{}, /found an Object/],
  ]) {
    await assert.rejects(mod.runStream(source), (e) => e instanceof TypeError && message.test(e.message));
  }
  let cancelled;
  const web = new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(3));
      controller.enqueue('not bytes');
    },
    cancel(reason) {
      cancelled = reason;
    },
  });
  await assert.rejects(mod.runStream(web), /cidv1_from_bytes stream chunk: expected Uint8Array, found a string/);
  assert.match(String(cancelled), /expected Uint8Array, found a string/);
  const text = Readable.from(['a', 'b']);
  await assert.rejects(mod.runStream(text), /expected Uint8Array, found a string/);
  assert.equal(text.destroyed, true);
  await assert.rejects(mod.runStream(createReadStream(join(tmpdir(), 'braid-no-such-file'))), /ENOENT/);
  const failing = new ReadableStream({
    pull(controller) {
      controller.error(new Error('the disk went away'));
    },
  });
  await assert.rejects(mod.runStream(failing), /the disk went away/);
  const input = pattern(1234);
  assert.equal(await mod.runStream(new Blob([input])), mod.runSync([input]));
});

test('workflows whose first step cannot stream export neither stream nor runStream', () => {
  for (const name of ['salted_cid', 'dual_cid_of_text', 'photo_proof']) {
    const mod = load(name);
    assert.equal(mod.stream, undefined, name);
    assert.equal(mod.runStream, undefined, name);
    const types = readFileSync(`${out}/${name}/pkg/node/wf_${name}.d.ts`, 'utf8');
    assert.doesNotMatch(types, /runStream|class Stream/, name);
  }
  const types = readFileSync(`${out}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes.d.ts`, 'utf8');
  assert.match(types, /export function runStream\(source: StreamSource\): Promise<Output>;/);
  assert.match(types, /update\(chunk: Uint8Array\): void;/);
  assert.match(types, /finish\(\): Output;/);
});
