// Previews (js/editor/src/preview.js) agree with the fused build: every
// example workflow in workflows/ run one step at a time, each step by its
// operation's own Node package (target/npm, `make test-wasm`), gives the
// fused package's output as its last step's, on sample inputs of every
// type it takes. A workflow with an operation that has no package (one
// that does not build for Wasm) is named, not silently left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { examples, exampleInputs as inputsOf, fusedOutput } from '../lib/examples.mjs';
import { root, opPkgs as pkgs } from '../lib/paths.mjs';
import { previewSteps, runPreview } from '../editor/src/preview.js';

const require = createRequire(import.meta.url);

const operation = (name) => JSON.parse(readFileSync(`${root}/operations/${name}/manifest.json`, 'utf8'));
const isFlow = (step) => (operation(step.operation).groups ?? []).includes('FLOWCONTROL');
const packageOf = (name) => `${pkgs}/${name}/node/${name}.js`;
/** One step, by its operation's package, its config given per call. */
const execute = (step, args) => require(packageOf(step.operation)).executeSync(...args, step.config ?? {});


test('every example workflow, previewed step by step, gives what its fused build gives', async () => {
  const previewed = [];
  const without = [];
  for (const name of examples) {
    const manifest = JSON.parse(readFileSync(`${root}/workflows/${name}.json`, 'utf8'));
    const steps = previewSteps(manifest);
    const missing = [...new Set(steps.map((s) => s.step.operation).filter((op) => !existsSync(packageOf(op))))];
    if (missing.length) {
      without.push(`${name} (${missing.join(', ')})`);
      continue;
    }
    const externals = inputsOf(name);
    assert.ok(externals, `${name}: sample inputs for this example (add them above)`);
    const fused = fusedOutput(name, externals);
    const results = await runPreview(steps, externals, execute, isFlow);
    assert.equal(results.length, steps.length, name);
    for (const r of results) assert.ok('value' in r, `${name}: ${JSON.stringify(r)}`);
    // The workflow's output is its last step's.
    assert.deepEqual(results.at(-1).value, fused, name);
    previewed.push(name);
  }
  // Only operations that do not build for Wasm keep an example out (op_file reads files).
  assert.deepEqual(without, ['cid_of_file (op_file)']);
  assert.equal(previewed.length, examples.length - 1);
});

test('a step that fails fails alone: the steps that need it are skipped, naming it; the others run', async () => {
  const manifest = JSON.parse(readFileSync(`${root}/workflows/photo_proof.json`, 'utf8'));
  const steps = previewSteps(manifest);
  assert.deepEqual(steps.map((s) => s.pointer), [
    '/segments/0/sequence/0',
    '/segments/1/sequence/0', '/segments/1/sequence/1',
    '/segments/2/sequence/0', '/segments/2/sequence/1', '/segments/2/sequence/2',
    '/segments/3/sequence/0',
    '/segments/4/sequence/0',
  ]);
  // The named input `photo` goes to segments 0 and 1; segment 4 takes 1, 2, 3 and 0 (their last steps).
  assert.deepEqual(steps[0].inputs, [{ external: 0 }]);
  assert.deepEqual(steps[1].inputs, [{ external: 0 }]);
  assert.deepEqual(steps[2].inputs, [{ step: 1 }]);
  assert.deepEqual(steps.at(-1).inputs, [{ step: 2 }, { step: 5 }, { step: 6 }, { step: 0 }]);
  const results = await runPreview(steps, [new TextEncoder().encode('not an image')], execute, isFlow);
  assert.match(results[0].error, /not a PNG or JPEG file/);
  // The file's CID does not need the decoded image.
  assert.match(results[2].value, /^bafkr4i/);
  for (const i of [3, 4, 5, 6, 7]) assert.equal(results[i].skipped, '/segments/0/sequence/0', JSON.stringify(results[i]));
});
