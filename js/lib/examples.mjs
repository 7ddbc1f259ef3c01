// The example workflows (`workflows/*.json`) and sample inputs for each:
// what the preview tests, in Node and in Chromium, run one step at a time
// and compare with the fused build.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { inputValue } from './reference.mjs';
import { root, wfOut } from './paths.mjs';

const require = createRequire(import.meta.url);
const sample = (name) => new Uint8Array(readFileSync(`${root}/workflows/samples/images/${name}`));
const photo = () => ({ width: 64, height: 48, pixels: sample('photo.png.rgba') });
const vectors = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8')).cases;

/** The example workflows' names, sorted. */
export const examples = readdirSync(`${root}/workflows`).filter((f) => f.endsWith('.json') && f !== 'vectors.json').map((f) => f.slice(0, -5)).sort();

/** Sample inputs of example `name` (what its `run` takes): the vectors' first case, else images; undefined if none are set here. */
export function exampleInputs(name) {
  const vector = vectors.find((c) => c.workflow === name);
  if (vector) return vector.calls.flat().map((spec) => inputValue(spec, root));
  return {
    decoded_images: () => [sample('photo.png'), { width: 1, height: 2, pixels: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) }],
    image_pixels: () => [sample('photo.png')],
    photo_metadata: () => [sample('photo.jpg')],
    photo_proof: () => [sample('photo.png')],
    photo_similarity: () => [sample('photo.png'), sample('photo.jpg')],
    thumbnail_hashes: () => [photo(), { width: 32, height: 24 }, { width: 32, height: 32 }],
  }[name]?.();
}

/** The output of example `name`'s fused build (its Node package, `make test-workflows`) on `inputs`. */
export const fusedOutput = (name, inputs) => require(`${wfOut}/${name}/pkg/node/wf_${name}.js`).runSync(inputs);
