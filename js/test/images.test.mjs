// Value types of one's own across the JS boundary: workflows/decoded_images
// decodes a PNG or JPEG (op_image_decode) and lists the image with one given
// as a plain object (op_collect), so op_image_decode::Image is an external
// input, a flow-control generic's type and the output. Pixels are checked
// against pngjs (exactly) and jpeg-js (within a tolerance: JPEG decoders
// are not bit-exact); bad files and bad objects are Errors saying what and
// where; a suspended instance resumes with the image inside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { decode, exifTags, images } from '../lib/images.mjs';
import { root, wfOut as out } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const wf = require(`${out}/decoded_images/pkg/node/wf_decoded_images.js`);
const sample = (name) => new Uint8Array(readFileSync(`${root}/workflows/samples/images/${name}`));
const given = { width: 1, height: 2, pixels: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) };

test('the committed sample images are what js/lib/images.mjs makes', () => {
  for (const { name, file, rgba } of images()) {
    assert.deepEqual(sample(name), new Uint8Array(file), name);
    assert.deepEqual(sample(`${name}.rgba`), new Uint8Array(rgba), `${name}.rgba`);
  }
});

test('PNG pixels equal pngjs, JPEG pixels are within a tolerance of jpeg-js, as plain objects', async () => {
  for (const name of ['photo.png', 'alpha.png', 'gray.png', 'photo.jpg', 'large.jpg', 'exif.jpg']) {
    const [image, same] = await wf.run([sample(name), given]);
    const reference = decode(name, sample(name));
    assert.deepEqual(Object.keys(image), ['width', 'height', 'pixels'], name);
    assert.equal(image.width, reference.width, name);
    assert.equal(image.height, reference.height, name);
    assert.ok(image.pixels instanceof Uint8Array, name);
    if (name.endsWith('.png')) {
      assert.deepEqual(image.pixels, reference.data, name);
    } else {
      let sum = 0;
      let max = 0;
      for (let i = 0; i < image.pixels.length; i++) {
        const d = Math.abs(image.pixels[i] - reference.data[i]);
        sum += d;
        max = Math.max(max, d);
      }
      assert.ok(sum / image.pixels.length < 1.5 && max <= 24, `${name}: mean ${sum / image.pixels.length}, max ${max}`);
    }
    assert.deepEqual(same, given, 'the image given as an object comes back as it went in');
  }
});

test('a suspended instance resumes with the decoded image inside', async () => {
  const first = new wf.Workflow();
  const step = await first.next([sample('photo.png')]);
  assert.equal(step.done, false);
  const state = first.suspend();
  first.free();
  const again = wf.Workflow.resume(state);
  const last = await again.next([given]);
  assert.equal(last.done, true);
  assert.deepEqual(last.output[0].pixels, decode('photo.png', sample('photo.png')).data);
  assert.deepEqual(last.output[1], given);
});

test('bad files and bad image objects are Errors saying what and where; the module keeps working', async () => {
  const png = sample('photo.png');
  const huge = png.slice();
  new DataView(huge.buffer).setUint32(16, 100000);
  const cases = [
    [[new Uint8Array([1, 2, 3]), given], /not a PNG or JPEG file/],
    [[png.subarray(0, png.length / 2), given], /op_image_decode: invalid input/],
    [[sample('photo.jpg').subarray(0, 1000), given], /truncated JPEG/],
    [[huge, given], /op_image_decode: invalid input/],
    [[png, { ...given, width: -1 }], /decoded_images input 1\.width: expected number \(an integer in 0\.\.=4294967295\), found -1/],
    [[png, { ...given, pixels: [1, 2] }], /input 1\.pixels: expected Uint8Array, found an Array/],
    [[png, { width: 1, height: 2 }], /input 1\.pixels: expected Uint8Array, found undefined/],
    [[png, null], /input 1: expected Image \(an object \{ width, height, pixels \}\), found null/],
    [[png, new Proxy(given, { get() { throw new Error('boom'); } })], /input 1\.width: .*threw.*boom/],
  ];
  for (const [inputs, message] of cases) {
    await assert.rejects(wf.run(inputs), (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message), String(message));
  }
  const [image] = await wf.run([png, given]);
  assert.equal(image.width, 64);
});

test('a value type holding a map: photo_metadata gives the EXIF tags exifreader reads', async () => {
  const meta = require(`${out}/photo_metadata/pkg/node/wf_photo_metadata.js`);
  const expected = exifTags(sample('exif.jpg'));
  // exifreader names tag 0x8827 as EXIF 2.2 did; kamadak-exif as 2.3 does.
  expected.PhotographicSensitivity = expected.ISOSpeedRatings;
  delete expected.ISOSpeedRatings;
  const { tags } = await meta.run([sample('exif.jpg')]);
  assert.deepEqual({ ...tags }, expected);
  assert.deepEqual(JSON.parse(readFileSync(`${root}/workflows/samples/images/exif.jpg.tags.json`, 'utf8')), exifTags(sample('exif.jpg')));
  assert.deepEqual(await meta.run([sample('photo.jpg')]), { tags: {} }, 'no EXIF: no tags');
  await assert.rejects(meta.run([new Uint8Array([1, 2, 3])]), /op_exif: invalid input: cannot read its EXIF/);
});
