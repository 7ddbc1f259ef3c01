// Every image operation's Wasm package on the corpus of
// generator/braid/tests/image_fuzz.rs (a PNG grid and seeded mutations of
// the samples, written to target/image-fuzz/ by `make test-rust`, with the
// native answers): the same calls here must give the same answers, and
// no trap (a RuntimeError) ever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { root, opPkgs as ops } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const fuzz = `${root}/target/image-fuzz`;
const op = (name) => require(`${ops}/${name}/node/${name}.js`);

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const imageDigest = (image) => `${image.width}x${image.height}:${sha256(image.pixels)}`;

/** What image_fuzz.rs writes for a call: `ok:` and a digest, or `err:` and the message. */
function answer(call, digest) {
  try {
    return `ok:${digest(call())}`;
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError || !(e instanceof Error)) return `TRAP: ${e}`;
    return `err:${e.message}`;
  }
}

const RESIZES = [[1, 1, 'triangle'], [3, 2, 'lanczos3'], [17, 1, 'catmullrom'], [1, 300, 'nearest']];

function imageAnswers(m, image) {
  return {
    gray: answer(() => m.gray.executeSync(image), imageDigest),
    resize: RESIZES.map(([width, height, filter]) =>
      answer(() => m.resize.executeSync(image, { width, height }, { filter, max_megapixels: '1' }), imageDigest)),
    phash: ['blockhash', 'dhash', 'phash'].map((algorithm) => answer(() => m.phash.executeSync(image, { algorithm }), (h) => h)),
    pixels: answer(() => m.pixels.executeSync(image), sha256),
  };
}

test('every image operation in Wasm answers the fuzz corpus as natively, without a trap', { skip: !existsSync(`${fuzz}/answers.json`) && 'run `cargo test -p braid --test image_fuzz` first (make test-rust does)' }, () => {
  const expected = JSON.parse(readFileSync(`${fuzz}/answers.json`, 'utf8'));
  const m = {
    decode: op('op_image_decode'), exif: op('op_exif'), gray: op('op_image_gray'),
    resize: op('op_image_resize'), phash: op('op_image_phash'), pixels: op('op_image_pixels'),
  };
  const differences = [];
  // Keys sorted, as serde_json writes them.
  const canonical = (v) => JSON.stringify(v, (_, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
  const compare = (what, found, wanted) => {
    if (canonical(found) !== canonical(wanted)) differences.push(`${what}: ${canonical(found)}, natively ${canonical(wanted)}`);
  };
  for (const c of expected.cases) {
    const file = new Uint8Array(readFileSync(`${fuzz}/corpus/${c.file}`));
    let image;
    const decode = answer(() => (image = m.decode.executeSync(file, { max_megapixels: '1' })), imageDigest);
    compare(`${c.file} decode`, decode, c.decode);
    compare(`${c.file} exif`, answer(() => m.exif.executeSync(file), () => ''), c.exif);
    if (c.image && image) compare(`${c.file} image operations`, imageAnswers(m, image), c.image);
  }
  for (const s of expected.synthetic) {
    const image = { width: s.width, height: s.height, pixels: new Uint8Array(readFileSync(`${fuzz}/corpus/${s.file}`)) };
    compare(`${s.file} image operations`, imageAnswers(m, image), s.image);
  }
  assert.ok(expected.cases.length >= 3000, `${expected.cases.length} cases`);
  assert.deepEqual(differences.slice(0, 20), [], `${differences.length} differences`);
});
