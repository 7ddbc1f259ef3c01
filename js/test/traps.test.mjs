// A trap never breaks a package (Node; the same check runs in Chromium in
// browser.test.mjs): the `trapping` workflow traps a hundred times in a row
// through every entry point, each call failing with an Error that says the
// module was reset, and then answers right, on fresh instances. A bundler
// package, whose Wasm cannot be instantiated again, stays failed instead:
// no call runs on the instance the trap left mid-call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { wasmModules } from '../lib/esbuild-wasm.mjs';
import { nestedTrapChecks, trapChecks } from '../lib/traps.mjs';
import { wfOut as out } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);

test('a hundred traps in a row, then correct answers: the module resets after each', async () => {
  const wf = require(`${out}/trapping/pkg/node/wf_trapping.js`);
  assert.deepEqual(await trapChecks(wf), []);
});

test('a trap in a call made during another resets the module once the outer call returns, failing both', async () => {
  const wf = require(`${out}/trapping/pkg/node/wf_trapping.js`);
  assert.deepEqual(await nestedTrapChecks(wf), []);
});

test('a bundler package that trapped fails every later call with the trap\'s Error, through every entry point', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-bundled-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bundle = join(dir, 'wf.mjs');
  await build({
    entryPoints: [`${out}/trapping/pkg/bundler/wf_trapping.js`],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    outfile: bundle,
    plugins: [wasmModules],
    logLevel: 'error',
  });
  const wf = await import(pathToFileURL(bundle).href);
  const enc = (s) => new TextEncoder().encode(s);
  const text = (bytes) => new TextDecoder().decode(bytes);
  assert.equal(text(wf.runSync([enc('before')])), 'before');
  const made = new wf.Workflow();
  const failed = (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && /^the module trapped \(.*\): this call failed, and so does every later call/.test(e.message);
  assert.throws(() => wf.runSync([enc('trap')]), failed);
  for (let i = 0; i < 20; i++) {
    assert.throws(() => wf.runSync([enc(`after ${i}`)]), failed, 'runSync');
    // The Promise APIs reject; they do not throw.
    const pending = wf.run([enc(`after ${i}`)]);
    assert.ok(pending instanceof Promise);
    await assert.rejects(pending, failed, 'run');
    await assert.rejects(wf.runMany([[enc('a')]]), failed, 'runMany');
    await assert.rejects(made.next([enc('made before')]), failed, 'next of a Workflow made before');
    await assert.rejects(new wf.Workflow().next([enc('new')]), failed, 'next of a new Workflow');
  }
});
