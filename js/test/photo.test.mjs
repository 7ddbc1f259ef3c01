// The image workflows against independent implementations, in Node:
// photo_proof (multiformats + @noble/hashes for the CIDs, blockhash-core on
// pngjs/jpeg-js pixels for the hash: exact for PNG; for JPEG, whose decoders
// are not bit-exact, the pixels' CID is checked against the workflow's own
// decoded pixels and the blockhash by distance), photo_similarity (distances
// blockhash-core's digits give), and thumbnail_hashes, where
// op_image_decode::Image flows between three other crates' operations:
// the fused workflow equals the same operations chained as separate npm
// packages, and suspends and resumes with the image inside. Broken,
// truncated and oversize images are Errors saying what is wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { crc32 } from 'node:zlib';
import { bmvbhash } from 'blockhash-core';
import { hammingDistance, photoProof } from '../lib/images.mjs';
import { cid } from '../lib/reference.mjs';
import { root, wfOut as out, opPkgs as pkgs } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const workflow = (name) => require(`${out}/${name}/pkg/node/wf_${name}.js`);
const op = (name) => require(`${pkgs}/${name}/node/${name}.js`);
const sample = (name) => new Uint8Array(readFileSync(`${root}/workflows/samples/images/${name}`));
const proofs = JSON.parse(readFileSync(`${root}/workflows/samples/images/proofs.json`, 'utf8'));
const NAMES = ['photo.png', 'alpha.png', 'gray.png', 'photo.jpg', 'large.jpg', 'exif.jpg'];

test('the committed proofs are what the independent implementations compute', () => {
  assert.deepEqual(Object.keys(proofs), NAMES);
  for (const name of NAMES) assert.deepEqual(proofs[name], photoProof(name, sample(name)), name);
});

test("op_image_phash's blockhash equals blockhash-core's bmvbhash(imageData, 8) at every size, 1 x 1 and 17 x 1 included", () => {
  const phash = op('op_image_phash');
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  const sizes = [[1, 1], [17, 1], [1, 17], [2, 3], [7, 7], [8, 8], [9, 3], [3, 9], [16, 24], [33, 5], [64, 48], [13, 13]];
  for (const [width, height] of sizes) {
    for (const alpha of [false, true]) {
      const data = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 && !alpha ? 255 : random()));
      const expected = bmvbhash({ width, height, data }, 8);
      const got = phash.executeSync({ width, height, pixels: data }, { algorithm: 'blockhash' });
      assert.equal(got, expected, `${width} x ${height}${alpha ? ' with transparency' : ''}`);
    }
  }
});

test('photo_proof matches multiformats, @noble/hashes and blockhash-core', async () => {
  const wf = workflow('photo_proof');
  const decoded = workflow('decoded_images');
  for (const name of NAMES) {
    const proof = await wf.run([sample(name)]);
    const expected = proofs[name];
    assert.deepEqual(Object.keys(proof), ['fileCid', 'pixelsCid', 'blockhash', 'width', 'height'], name);
    assert.equal(proof.fileCid, expected.fileCid, name);
    assert.equal(proof.width, expected.width, name);
    assert.equal(proof.height, expected.height, name);
    assert.match(proof.blockhash, /^[0-9a-f]{16}$/, name);
    if (name.endsWith('.png')) {
      assert.equal(proof.pixelsCid, expected.pixelsCid, name);
      assert.equal(proof.blockhash, expected.blockhash, name);
    } else {
      const [image] = await decoded.run([sample(name), { width: 0, height: 0, pixels: new Uint8Array() }]);
      assert.equal(proof.pixelsCid, cid(image.pixels, { hasher: 'sha2-256', base: 'base32', codec: 'raw' }), name);
      const d = hammingDistance(proof.blockhash, expected.blockhash);
      assert.ok(d <= 4, `${name}: blockhash ${proof.blockhash}, blockhash-core on jpeg-js's pixels ${expected.blockhash}: ${d} bits apart`);
    }
    assert.deepEqual(wf.runSync([sample(name)]), proof, `${name}: runSync`);
  }
});

/** photo.png with its IHDR saying `width` x `height` (CRC fixed). */
function withSize(width, height) {
  const png = sample('photo.png');
  const view = new DataView(png.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  view.setUint32(29, crc32(png.subarray(12, 29)));
  return png;
}

test('image_pixels and the op_image_pixels package (borrowed outputs) give the pixels pngjs decodes', async () => {
  const wf = workflow('image_pixels');
  const decode = op('op_image_decode');
  const pixels = op('op_image_pixels');
  for (const name of ['photo.png', 'alpha.png', 'gray.png']) {
    const rgba = sample(`${name}.rgba`);
    assert.deepEqual(await wf.run([sample(name)]), rgba, name);
    assert.deepEqual(pixels.executeSync(decode.executeSync(sample(name))), rgba, name);
  }
  // A JPEG's pixels are the workflow's own decode (decoders differ), the same in both.
  const jpg = sample('photo.jpg');
  assert.deepEqual(wf.runSync([jpg]), pixels.executeSync(decode.executeSync(jpg)));
  assert.throws(() => pixels.executeSync({ width: 2, height: 2, pixels: new Uint8Array(3) }), /holds 16 bytes of RGBA8 pixels, not 3/);
});

test('broken, truncated and oversize photos are Errors saying what is wrong', async () => {
  const wf = workflow('photo_proof');
  const png = sample('photo.png');
  const jpg = sample('photo.jpg');
  for (const [input, message] of [
    [new TextEncoder().encode('not an image'), /not a PNG or JPEG file/],
    [png.subarray(0, png.length / 2), /PNG/],
    [jpg.subarray(0, jpg.length - 200), /JPEG/],
    [withSize(100000, 100000), /100000x100000 .*over the limit of 64 megapixels/],
    [new Uint8Array(), /not a PNG or JPEG file/],
  ]) {
    await assert.rejects(wf.run([input]), (e) => e instanceof Error && message.test(e.message), String(message));
    assert.throws(() => wf.runSync([input]), message);
  }
  await assert.rejects(wf.run(['photo.png']), /photo_proof input 0 \(photo\): expected Uint8Array, found a string/);
  // The module is still usable.
  assert.equal((await wf.run([png])).blockhash, proofs['photo.png'].blockhash);
});

test('photo_similarity gives the distance blockhash-core digits give', async () => {
  const wf = workflow('photo_similarity');
  const pngs = ['photo.png', 'alpha.png', 'gray.png'];
  for (const a of pngs) {
    for (const b of pngs) {
      const r = await wf.run([sample(a), sample(b)]);
      const distance = hammingDistance(proofs[a].blockhash, proofs[b].blockhash);
      assert.deepEqual(r, { distance, bits: 64, similarity: 1 - distance / 64 }, `${a} ${b}`);
    }
  }
  // One drawing as PNG and as JPEG: close; another drawing: far.
  const same = await wf.run([sample('photo.png'), sample('photo.jpg')]);
  const other = await wf.run([sample('photo.png'), sample('large.jpg')]);
  assert.ok(same.similarity >= 0.9 && other.similarity < 0.8, `${JSON.stringify(same)} ${JSON.stringify(other)}`);
  await assert.rejects(wf.run([sample('photo.png'), new Uint8Array([1, 2, 3])]), /not a PNG or JPEG file/);
});

const photo = () => ({ width: 64, height: 48, pixels: sample('photo.png.rgba') });

test('thumbnail_hashes (a type of a crate no step uses) equals its operations chained as npm packages', async () => {
  const wf = workflow('thumbnail_hashes');
  const size = { width: 32, height: 24 };
  const square = { width: 32, height: 32 };
  const fused = await wf.run([photo(), size, square]);
  const resize = op('op_image_resize');
  const phash = op('op_image_phash');
  const gray = op('op_image_gray').executeSync(resize.executeSync(photo(), size, { filter: 'triangle' }));
  const chained = [
    phash.executeSync(gray, { algorithm: 'dhash' }),
    phash.executeSync(resize.executeSync(gray, square, { filter: 'nearest' }), { algorithm: 'phash' }),
  ];
  assert.deepEqual(fused, chained);
  // Suspended while it holds the thumbnail (the second size comes next).
  const first = new wf.Workflow();
  await first.next([photo(), size]);
  const again = wf.Workflow.resume(first.suspend());
  first.free();
  const step = await again.next([square]);
  assert.equal(step.done, true);
  assert.deepEqual(step.output, fused);
  for (const [inputs, message] of [
    [[{ ...photo(), pixels: new Uint8Array(10) }, size, square], /op_image_resize.*not 10/],
    [[photo(), { width: 0, height: 3 }, square], /cannot resize to 0 x 3/],
    [[photo(), { width: 3 }, square], /thumbnail_hashes input 1\.height: expected number/],
    [[{ width: 1, height: 1 }, size, square], /thumbnail_hashes input 0\.pixels: expected Uint8Array, found undefined/],
  ]) {
    await assert.rejects(wf.run(inputs), message, String(message));
  }
});
