// The book's examples (docs/examples/, included in docs/src/examples.md),
// built and run as a reader would: the Node server answers a photo with the
// proof the independent implementations computed (workflows/samples/images/
// proofs.json), the Rust program prints it, and the Vite app, built by Vite,
// shows it in Chromium for a file chosen in its page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, serve } from '../lib/static-server.mjs';
import { root, wfOut as out } from '../lib/paths.mjs';

const examples = `${root}/docs/examples`;
const images = `${root}/workflows/samples/images`;
const proofs = JSON.parse(readFileSync(`${images}/proofs.json`, 'utf8'));

test('the Node server example answers POST /proof with the photo proof, and a broken photo with 422', async () => {
  process.env.PHOTO_PROOF_PKG = `${out}/photo_proof/pkg/node/wf_photo_proof.js`;
  const { proofServer } = await import(`${examples}/photo-proof-server/server.mjs`);
  const server = proofServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/proof`;
  try {
    for (const name of ['photo.png', 'photo.jpg']) {
      const res = await fetch(url, { method: 'POST', body: readFileSync(`${images}/${name}`) });
      assert.equal(res.status, 200, name);
      const proof = await res.json();
      // JPEG decoders are not bit-exact (see photo.test.mjs): the file's CID and size must match.
      const keys = name.endsWith('.png') ? Object.keys(proofs[name]) : ['fileCid', 'width', 'height'];
      for (const key of keys) assert.equal(proof[key], proofs[name][key], `${name}: ${key}`);
    }
    const broken = await fetch(url, { method: 'POST', body: 'not an image' });
    assert.equal(broken.status, 422);
    assert.match((await broken.json()).error, /not a PNG or JPEG file/);
    assert.equal((await fetch(url)).status, 404);
  } finally {
    server.close();
  }
});

test('the Rust program example prints the photo proof', () => {
  const dir = `${examples}/photo-proof-rust`;
  copyFileSync(`${out}/photo_proof/crate/Cargo.lock`, `${dir}/Cargo.lock`);
  const targetDir = process.env.BRAID_TARGET_DIR ?? `${root}/target/braid`;
  const r = spawnSync('cargo', ['run', '--quiet', '--target-dir', targetDir, '--', `${images}/photo.png`], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), proofs['photo.png']);
  const missing = spawnSync('cargo', ['run', '--quiet', '--target-dir', targetDir, '--', `${images}/nope.png`], { cwd: dir, encoding: 'utf8' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /nope\.png: No such file/);
});

test('the Vite app example, built by Vite, proves a photo chosen in its page in Chromium', async () => {
  process.env.PHOTO_PROOF_WEB = `${out}/photo_proof/pkg/web`;
  const { build } = await import('vite');
  const dir = `${examples}/photo-proof-web`;
  const dist = mkdtempSync(join(tmpdir(), 'braid-vite-example-'));
  await build({ root: dir, configFile: `${dir}/vite.config.js`, logLevel: 'error', build: { outDir: dist, emptyOutDir: true } });
  const site = await serve({ '/': dist });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${site.base}/index.html`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 120_000 });
    await page.setInputFiles('input[type=file]', `${images}/photo.png`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 120_000 });
    assert.deepEqual(await page.evaluate(() => window.result), proofs['photo.png'], errors.join('; '));
    assert.match(await page.textContent('#proof'), /"fileCid"/);
  } finally {
    await browser.close();
    site.close();
  }
});
