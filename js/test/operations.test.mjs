// Each Wasm-capable operation, built alone as a Node package
// (`braid op-package`), against the independent reference implementation
// (multiformats + @noble/hashes) and the committed vectors; plus the errors
// JS callers get for bad calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { input, vectors, multihash, HASHERS } from '../lib/reference.mjs';
import { opPkgs as pkgs } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const load = (op) => require(`${pkgs}/${op}/node/${op}.js`);
const opMultihash = load('op_multihash');
const opCid = load('op_cid');
const opCollect = load('op_collect');
const opConcat = load('op_concat');
const opEncode = load('op_encode');
const opUtf8 = load('op_utf8');
const opDecode = load('op_decode');
const opDigest = load('op_multihash_digest');

const committed = JSON.parse(readFileSync(new URL('../../operations/vectors/cid.json', import.meta.url), 'utf8'));

test('committed vectors are what the reference implementation computes', () => {
  assert.deepEqual(committed, vectors());
});

test('Wasm op_multihash + op_cid equal the reference for every size, hasher, base and codec', async () => {
  assert.ok(committed.cases.length >= 75);
  for (const c of committed.cases) {
    const bytes = input(c.size);
    const what = `size ${c.size} ${c.hasher} ${c.base} ${c.codec}`;
    const mh = opMultihash.executeSync(bytes, { hasher: c.hasher });
    assert.ok(mh instanceof Uint8Array, what);
    assert.deepEqual(mh, multihash(bytes, c.hasher), what);
    assert.equal(opCid.executeSync(mh, { base: c.base, codec: c.codec }), c.cid, what);
    // The Promise API gives the same answer.
    const mh2 = await opMultihash.execute(bytes, { hasher: c.hasher });
    assert.equal(await opCid.execute(mh2, { base: c.base, codec: c.codec }), c.cid, what);
  }
});

test('config defaults are blake3, base32, raw', () => {
  const bytes = input(11);
  const expected = committed.cases.find((c) => c.size === 11 && c.hasher === 'blake3' && c.base === 'base32').cid;
  assert.equal(opCid.executeSync(opMultihash.executeSync(bytes)), expected);
  assert.equal(opCid.executeSync(opMultihash.executeSync(bytes, {}), null), expected);
});

test('manifests are exported and match the committed files', () => {
  for (const [op, mod] of Object.entries({ op_multihash: opMultihash, op_cid: opCid, op_collect: opCollect })) {
    const fromWasm = JSON.parse(mod.manifest());
    const onDisk = JSON.parse(readFileSync(new URL(`../../operations/${op}/manifest.json`, import.meta.url), 'utf8'));
    assert.deepEqual(fromWasm, onDisk, op);
  }
  assert.deepEqual(JSON.parse(opMultihash.manifest()).config.hasher, Object.keys(HASHERS));
});

test('bad calls reject with an Error that says what was expected, and the instance keeps working', async () => {
  const cases = [
    [() => opMultihash.executeSync('text'), /op_multihash input 0: expected Uint8Array, found a string/],
    [() => opMultihash.executeSync(null), /expected Uint8Array, found null/],
    [() => opMultihash.executeSync(), /expected Uint8Array, found undefined/],
    [() => opMultihash.executeSync([1, 2]), /expected Uint8Array, found an Array/],
    [() => opMultihash.executeSync(new Uint8Array(1), { hasher: 'md5' }), /config `hasher` cannot be `md5`; expected one of: blake3, sha2-256/],
    [() => opMultihash.executeSync(new Uint8Array(1), { hash: 'blake3' }), /unknown config key `hash`; expected one of: hasher/],
    [() => opMultihash.executeSync(new Uint8Array(1), { hasher: 3 }), /config `hasher`: expected string, found a number/],
    [() => opMultihash.executeSync(new Uint8Array(1), 'blake3'), /config: expected an object/],
    [() => opCid.executeSync(new Uint8Array([0x12, 0x20, 1])), /digest length prefix says 32 bytes but 1 follow/],
    [() => opCid.executeSync(new Uint8Array([0x12, 0x20, 1]), { base: 'base2' }), /config `base` cannot be `base2`/],
    [() => opCollect.executeSync([]), /op_collect: expected at least 1 input\(s\), found 0/],
    [() => opCollect.executeSync('x'), /op_collect inputs: expected Array, found a string/],
    [() => opConcat.executeSync([new Uint8Array(1), 'x']), /op_concat input 0\[1\]: expected Uint8Array, found a string/],
    [() => opUtf8.executeSync(new Uint8Array(1)), /op_utf8 input 0: expected string, found a Uint8Array/],
  ];
  for (const [call, message] of cases) {
    assert.throws(call, (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message));
  }
  await assert.rejects(opMultihash.execute(42), /expected Uint8Array, found a number/);
  // Still usable after all of that.
  assert.deepEqual(opMultihash.executeSync(input(11), { hasher: 'sha2-256' }), multihash(input(11), 'sha2-256'));
});

test('op_utf8, op_encode, op_concat and op_collect agree with Node built-ins', () => {
  const text = 'héllo, wörld ✓';
  const utf8 = opUtf8.executeSync(text);
  assert.deepEqual(utf8, new TextEncoder().encode(text));
  const data = input(1000);
  const buf = Buffer.from(data);
  assert.equal(opEncode.executeSync(data), buf.toString('hex'));
  assert.equal(opEncode.executeSync(data, { encoding: 'base64' }), buf.toString('base64'));
  assert.equal(opEncode.executeSync(data, { encoding: 'base64url' }), buf.toString('base64url'));
  const parts = [input(3), new Uint8Array(0), input(16 * 1024)];
  assert.deepEqual(opConcat.executeSync(parts), new Uint8Array(Buffer.concat(parts)));
  const values = [1n, 'two', { three: 3 }];
  assert.deepEqual(opCollect.executeSync(values), values);
  assert.equal(opCollect.executeSync(values)[2], values[2], 'values pass through unchanged');
});

test('op_decode reads what Node encodes; op_multihash_digest gives the bare digest', () => {
  const buf = Buffer.from(input(1000));
  assert.deepEqual(opDecode.executeSync(buf.toString('hex')), new Uint8Array(buf));
  assert.deepEqual(opDecode.executeSync(buf.toString('hex').toUpperCase()), new Uint8Array(buf));
  assert.deepEqual(opDecode.executeSync(buf.toString('base64'), { encoding: 'base64' }), new Uint8Array(buf));
  assert.deepEqual(opDecode.executeSync(buf.toString('base64url'), { encoding: 'base64url' }), new Uint8Array(buf));
  assert.throws(() => opDecode.executeSync('abc'), /op_decode: .*3 characters/);
  assert.throws(() => opDecode.executeSync('zz'), /not hex text/);
  for (const [name, { fn }] of Object.entries(HASHERS)) {
    const mh = opMultihash.executeSync(buf, { hasher: name });
    assert.deepEqual(opDigest.executeSync(mh), fn(buf), name);
  }
});
