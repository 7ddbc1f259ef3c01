// The workflow editor `braid serve` serves at `/`, in Chromium (Debian's,
// driven by playwright-core), against a real service: photo_proof built
// from an empty canvas with the mouse (palette to canvas, port to port,
// config chosen), published, built, and run in the page on a PNG, compared
// with the independent reference, its runs listed in the page's history,
// and deployed under a name that then answers on the run endpoint; a wrong connection refused while
// dragging, with the reason; a diagnostic on the node it names, cleared
// by fixing it; every example opened and saved unchanged; undo, redo,
// delete and duplicate from the keyboard. Screenshots of the empty editor,
// a built workflow and an error state go to target/editor-screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../lib/static-server.mjs';
import { killHard, spawnServer } from '../lib/server.mjs';
import { photoProof } from '../lib/images.mjs';
import { root } from '../lib/paths.mjs';
import { canConnect, fromManifest, isFlow } from '../editor/src/model.js';
import { show } from '../editor/src/package.js';
import { examples, exampleInputs, fusedOutput } from '../lib/examples.mjs';

const KEY = 'editor-key';
const shots = join(root, 'target/editor-screenshots');
let server;
let base;
let browser;

before(async () => {
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  const s = await spawnServer({ dataDir: mkdtempSync(join(tmpdir(), 'braid-editor-')), key: KEY, args: ['--workers', '1'] });
  server = s.child;
  base = s.url;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
});
after(async () => {
  await browser?.close();
  killHard(server);
});

/**
 * The download Save gives. Once in a full `make test` on a fresh clone
 * (2026-11-26), headless Chromium gave no download event for a click on
 * Save that was otherwise answered (the page showed the workflow opened and
 * valid): Save is clicked a second time if no download starts within 10 s,
 * and a Save that downloads nothing fails both.
 */
async function saveDownload(page) {
  for (let attempt = 1; ; attempt++) {
    try {
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.locator('#save').click()]);
      return download;
    } catch (e) {
      if (attempt === 2 || e.name !== 'TimeoutError') throw e;
    }
  }
}

/**
 * Runs `body(page)` on a fresh editor page; page errors fail the test. On a
 * failure the page is kept as target/editor-screenshots/failed-<name>.png.
 */
async function withEditor(name, body) {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 }, acceptDownloads: true });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(`${base}/`);
    await page.waitForFunction(() => window.braidEditor?.ready, null, { timeout: 120_000 });
    await body(page);
    assert.deepEqual(errors, []);
  } catch (e) {
    await page.screenshot({ path: join(shots, `failed-${name}.png`) }).catch(() => {});
    if (errors.length) e.message += `\nerrors in the page:\n${errors.join('\n')}`;
    throw e;
  } finally {
    await page.close();
  }
}

const center = async (locator) => {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  assert.ok(box, 'the element is drawn');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
};

/** Drags with the mouse from one element (or point) to another, in steps, as a hand does. */
async function drag(page, from, to, { release = true } = {}) {
  // As a hand would, after the page has drawn what the last gesture changed.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const a = from.x === undefined ? await center(from) : from;
  const b = to.x === undefined ? await center(to) : to;
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  if (release) await page.mouse.up();
}

/** The n-th node titled `label` on the canvas, in the order they were added. */
const node = (page, label, n = 0) => page.locator(`rete-node[data-label="${label}"]`).nth(n);
const output = (nodeLocator) => nodeLocator.locator('[data-testid="output-out"] braid-socket div');
const input = (nodeLocator, port) => nodeLocator.locator(`[data-testid="input-${port}"] braid-socket div`);

/** Drags operation `name` (or the external input) from the palette to canvas point (x, y). */
async function place(page, name, x, y) {
  const canvas = await page.locator('#canvas').boundingBox();
  const item = name === 'input' ? page.locator('#add-input') : page.locator(`.palette-item[data-op="${name}"]`);
  await drag(page, item, { x: canvas.x + x, y: canvas.y + y });
}

const connect = (page, from, to, port) => drag(page, output(from), input(to, port));
/** Waits until the service's answer for the graph as it is now is drawn. */
const checked = (page) => page.waitForFunction(() => document.body.dataset.checked === 'done');
const connections = (page) => page.evaluate(() => window.braidEditor.canvas.editor.getConnections().length);

/** Opens photo_proof and removes the connections into (`target`) or out of (`source`) op_image_decode. */
async function openProofCut(page, side) {
  const m = JSON.parse(readFileSync(join(root, 'workflows/photo_proof.json'), 'utf8'));
  await page.evaluate((m) => window.braidEditor.open(m), m);
  await checked(page);
  await page.evaluate(async (side) => {
    const { canvas } = window.braidEditor;
    const decode = canvas.editor.getNodes().find((n) => n.label === 'op_image_decode');
    for (const c of canvas.editor.getConnections().filter((c) => c[side] === decode.id)) await canvas.editor.removeConnection(c.id);
  }, side);
}

/** Whether two boxes ({ x, y, w, h }) share no point. */
const apart = (a, b) => a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;

test('photo_proof from an empty canvas, with the mouse only: built by the service, run in the page, deployed as a name', { timeout: 900_000 }, async () => {
  await withEditor('photo-proof', async (page) => {
    await checked(page);
    assert.match(await page.textContent('#signature'), /Drag an operation from the palette/);
    await page.screenshot({ path: join(shots, 'empty.png') });
    // Four columns of nodes, each dropped where it will not cover another.
    await place(page, 'input', 20, 20);
    await place(page, 'op_image_decode', 20, 240);
    await place(page, 'op_multihash', 320, 20);
    await place(page, 'op_image_pixels', 320, 300);
    await place(page, 'op_image_phash', 320, 560);
    await place(page, 'op_cid', 620, 20);
    await place(page, 'op_multihash', 620, 330);
    await place(page, 'op_cid', 920, 20);
    await place(page, 'op_photo_proof', 920, 330);
    await page.locator('rete-node[data-label="input"] input[data-field="name"]').fill('photo');
    await page.locator('rete-node[data-label="input"] input[data-field="name"]').press('Enter');

    const photo = node(page, 'input');
    const decode = node(page, 'op_image_decode');
    const [hashFile, hashPixels] = [node(page, 'op_multihash', 0), node(page, 'op_multihash', 1)];
    const [cidFile, cidPixels] = [node(page, 'op_cid', 0), node(page, 'op_cid', 1)];
    const pixels = node(page, 'op_image_pixels');
    const phash = node(page, 'op_image_phash');
    const proof = node(page, 'op_photo_proof');
    await connect(page, photo, decode, 0);
    await connect(page, photo, hashFile, 0);
    await connect(page, hashFile, cidFile, 0);
    await connect(page, decode, pixels, 0);
    await connect(page, pixels, hashPixels, 0);
    await connect(page, hashPixels, cidPixels, 0);
    await connect(page, decode, phash, 0);
    await connect(page, cidFile, proof, 0);
    await connect(page, cidPixels, proof, 1);
    await connect(page, phash, proof, 2);
    await connect(page, decode, proof, 3);
    await drag(page, output(proof), input(node(page, 'output'), 0));
    assert.equal(await connections(page), 12);
    // Config, chosen from each field's values.
    await hashFile.locator('select[data-field="hasher"]').selectOption('blake3');
    await hashPixels.locator('select[data-field="hasher"]').selectOption('sha2-256');
    await phash.locator('select[data-field="algorithm"]').selectOption('blockhash');
    for (const cid of [cidFile, cidPixels]) {
      await cid.locator('select[data-field="base"]').selectOption('base32');
      await cid.locator('select[data-field="codec"]').selectOption('raw');
    }
    await page.locator('#wf-name').fill('photo_proof_drawn');
    await page.waitForFunction(() => document.querySelector('#signature.valid'), null, { timeout: 120_000 });
    assert.equal(await page.textContent('#signature'), 'photo: Bytes -> op_photo_proof::PhotoProof');
    assert.match(await page.textContent('#targets'), /native, nostd, wasm/);

    // The manifest it wrote says what photo_proof says (its segments in the order they were drawn).
    const manifest = await page.evaluate(() => window.braidEditor.manifest());
    assert.deepEqual(manifest.inputs, ['photo']);
    const steps = manifest.segments.flatMap((s) => s.sequence.map((o) => `${o.operation}${JSON.stringify(o.config ?? {})}`)).sort();
    const expected = JSON.parse(readFileSync(join(root, 'workflows/photo_proof.json'), 'utf8'));
    assert.deepEqual(steps, expected.segments.flatMap((s) => s.sequence.map((o) => `${o.operation}${JSON.stringify(o.config ?? {})}`)).sort());
    assert.equal(manifest.segments.length, 5);

    // Publish (web, which the page runs, and the component, which a
    // deployment runs), follow the job, run it on a PNG.
    await page.locator('#api-key').fill(KEY);
    await page.locator('#build-targets input[value="component"]').check();
    await page.locator('#publish').click();
    await page.waitForSelector('#job[data-state]', { timeout: 840_000 });
    assert.equal(await page.getAttribute('#job', 'data-state'), 'succeeded', await page.textContent('#job'));
    const artifacts = await page.locator('#artifacts a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')]));
    assert.ok(artifacts.some(([name, href]) => name === 'pkg-web.tgz' && href.startsWith('/v1/artifacts/')), JSON.stringify(artifacts));
    const sample = join(root, 'workflows/samples/images/photo.png');
    await page.setInputFiles('#try-inputs input[type=file]', sample);
    await page.locator('#run').click();
    await page.waitForSelector('#output[data-done]', { timeout: 60_000 });
    assert.equal(await page.getAttribute('#output', 'data-done'), 'true', await page.textContent('#output'));
    const ran = JSON.parse(await page.textContent('#output'));
    const expectedProof = photoProof('photo.png', readFileSync(sample));
    assert.deepEqual(ran, expectedProof);
    // The run history: each run, newest first, with its inputs and output (text only).
    await page.locator('#try-inputs textarea').fill('not an image');
    await page.setInputFiles('#try-inputs input[type=file]', []);
    await page.locator('#run').click();
    await page.waitForSelector('#output[data-done="error"]', { timeout: 60_000 });
    assert.equal(await page.locator('#history > li').count(), 2);
    const [failed, first] = await page.locator('#history summary').allTextContents();
    assert.match(failed, /not a PNG or JPEG file/);
    assert.match(first, new RegExp(`ms · \\{`));
    await page.locator('#history > li').nth(1).locator('summary').click();
    assert.deepEqual(JSON.parse(await page.locator('#history > li').nth(1).locator('pre').nth(1).textContent()), expectedProof);
    assert.match(await page.locator('#history > li').nth(1).locator('pre').nth(0).textContent(), /^photo: photo\.png \(\d+ bytes\)$/);

    // Deploy as: a name that then answers on the run endpoint's contract.
    assert.equal(await page.inputValue('#deploy-name'), 'photo-proof-drawn');
    await page.locator('#deploy-button').click();
    await page.waitForSelector('#deployed[data-state]', { timeout: 60_000 });
    assert.equal(await page.getAttribute('#deployed', 'data-state'), 'succeeded', await page.textContent('#deployed'));
    assert.match(await page.textContent('#deployed'), /POST http:\/\/.*\/v1\/deployments\/photo-proof-drawn\/run$/);
    const answer = await fetch(`${base}/v1/deployments/photo-proof-drawn/run`, {
      method: 'POST',
      body: readFileSync(sample),
      headers: { 'x-api-key': KEY, 'content-type': 'application/octet-stream' },
    });
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.deepEqual(await answer.json(), expectedProof);
    // It ran in a sandboxed frame of an opaque origin: the page's storage (the API key) and DOM are out of its reach.
    assert.equal(await page.evaluate(() => {
      const frame = document.querySelector('iframe[sandbox="allow-scripts"]');
      try {
        return String(frame.contentWindow.document.cookie ?? frame.contentWindow.localStorage);
      } catch (e) {
        return e.name;
      }
    }), 'SecurityError');
    // Nor can it reach the network through WebRTC, or a worker or frame of its own.
    const runner = page.frames().find((f) => f.url().endsWith('/editor/runner.html'));
    assert.deepEqual(await runner.evaluate(async () => {
      // A worker that would run answers; one the policy refuses fires `error`.
      const worker = await new Promise((resolve) => {
        try {
          const w = new Worker(URL.createObjectURL(new Blob(['postMessage(1)'], { type: 'text/javascript' })));
          w.onerror = () => resolve('refused');
          w.onmessage = () => resolve('ran');
        } catch (e) {
          resolve(e.name);
        }
      });
      return [typeof RTCPeerConnection, typeof webkitRTCPeerConnection, typeof RTCDataChannel, worker];
    }), ['undefined', 'undefined', 'undefined', 'refused']);
    await page.screenshot({ path: join(shots, 'built.png') });
  });
});

test("each step's output: photo_proof on a pinned sample photo, every node's output drawn, again within 2 s of a change", { timeout: 900_000 }, async (t) => {
  await withEditor('preview', async (page) => {
    const manifest = JSON.parse(readFileSync(join(root, 'workflows/photo_proof.json'), 'utf8'));
    await page.evaluate((m) => window.braidEditor.open(m), manifest);
    await checked(page);
    await page.locator('#api-key').fill(KEY);
    await page.locator('#api-key').dispatchEvent('change');
    const sample = join(root, 'workflows/samples/images/photo.png');
    await page.setInputFiles('#sample-inputs input[type=file]', sample);
    // The first time, the service builds each operation alone (once per version, for everyone).
    await page.waitForSelector('#preview-state[data-ms]', { timeout: 840_000 });
    const states = async () => page.locator('rete-node[data-kind="op"] [data-testid="node-preview"]').evaluateAll((els) => els.map((e) => e.dataset.state));
    assert.deepEqual(await states(), Array(8).fill('value'), await page.textContent('#preview-state'));
    // Images as images (drawn from their pixels), the rest as a summary; a click shows the whole value.
    const decode = node(page, 'op_image_decode');
    assert.equal(await decode.locator('[data-testid="node-preview"] span').textContent(), '64×48 image');
    assert.equal(await decode.locator('[data-testid="node-preview"] canvas').evaluate((c) => [c.width, c.height].join('x')), '64x48');
    const proof = node(page, 'op_photo_proof');
    await proof.locator('[data-testid="node-preview"]').click();
    const expected = photoProof('photo.png', readFileSync(sample));
    assert.deepEqual(JSON.parse(await page.textContent('#preview-detail')), expected);
    // The sample is kept with the workflow: a reload previews it again, without a new choice.
    await page.reload();
    await page.waitForFunction(() => window.braidEditor?.ready);
    await page.waitForSelector('#preview-state[data-ms]', { timeout: 120_000 });
    assert.match(await page.textContent('#sample-inputs'), /pinned: photo\.png/);
    // A change of configuration: every step drawn again, with no build, within 2 s of the change.
    // (By id: a node picked moves last among the nodes drawn.)
    const cidId = await node(page, 'op_cid').getAttribute('data-node');
    const fileCid = page.locator(`rete-node[data-node="${cidId}"]`);
    // Timed in the page, from just before the change to the new output on the node.
    const changed = await page.evaluate(() => performance.now());
    await fileCid.locator('select[data-field="base"]').selectOption('base58btc');
    await fileCid.locator('[data-testid="node-preview"] span', { hasText: /^"z/ }).waitFor({ timeout: 60_000 });
    const ms = await page.evaluate((t) => performance.now() - t, changed);
    t.diagnostic(`a config change previewed in ${ms.toFixed(0)} ms`);
    assert.ok(ms <= 2000, `the preview was drawn ${ms.toFixed(0)} ms after the change`);
    await page.screenshot({ path: join(shots, 'preview.png') });
    // A step that fails fails alone: the steps that need it say which one they waited for.
    await page.locator('#sample-inputs textarea').fill('not an image');
    await page.locator('#sample-inputs textarea').dispatchEvent('change');
    await decode.locator('[data-testid="node-preview"][data-state="error"]').waitFor({ timeout: 60_000 });
    assert.match(await decode.locator('[data-testid="node-preview"]').textContent(), /not a PNG or JPEG file/);
    assert.equal(await proof.locator('[data-testid="node-preview"]').getAttribute('data-state'), 'skipped');
    assert.match(await proof.locator('[data-testid="node-preview"]').textContent(), /needs op_image_decode/);
    // A fresh page whose first preview fails early (the steps after it never
    // load their packages) previews every step once the sample is mended.
    await page.reload();
    await page.waitForFunction(() => window.braidEditor?.ready);
    await decode.locator('[data-testid="node-preview"][data-state="error"]').waitFor({ timeout: 120_000 });
    await page.setInputFiles('#sample-inputs input[type=file]', sample);
    await proof.locator('[data-testid="node-preview"][data-state="value"]').waitFor({ timeout: 120_000 });
    assert.deepEqual(await states(), Array(8).fill('value'));
    // Clear samples forgets them: no outputs shown.
    await page.locator('#clear-samples').click();
    await page.waitForFunction(() => /Give every input a sample/.test(document.querySelector('#preview-state').textContent));
    assert.deepEqual(await states(), Array(8).fill(undefined));
  });
});

test("the editor's previews give what the fused build gives, on every example workflow", { timeout: 1_200_000 }, async () => {
  await withEditor('previews-agree', async (page) => {
    await page.locator('#api-key').fill(KEY);
    const compared = [];
    const without = [];
    for (const name of examples) {
      const manifest = JSON.parse(readFileSync(join(root, 'workflows', `${name}.json`), 'utf8'));
      const inputs = exampleInputs(name);
      assert.ok(inputs, `${name}: sample inputs in js/lib/examples.mjs`);
      // Bytes cross into the page as base64 (page.evaluate takes JSON).
      const encoded = JSON.stringify(inputs, (_, v) => (v instanceof Uint8Array ? { $bytes: Buffer.from(v).toString('base64') } : v));
      const { results } = await page.evaluate(async ({ manifest, encoded }) => {
        const inputs = JSON.parse(encoded, (_, v) => (v?.$bytes !== undefined ? Uint8Array.from(atob(v.$bytes), (c) => c.charCodeAt(0)) : v));
        return window.braidEditor.steps(manifest, inputs);
      }, { manifest, encoded });
      const unavailable = results.find((r) => r.error?.includes("'s package: "));
      if (unavailable) {
        without.push(`${name}: ${unavailable.error}`);
        continue;
      }
      for (const r of results) assert.ok('summary' in r, `${name}: ${JSON.stringify(r)}`);
      // The workflow's output is its last step's.
      assert.equal(results.at(-1).full, show(fusedOutput(name, inputs)), name);
      compared.push(name);
    }
    // Only an operation that does not build for Wasm keeps an example out (op_file reads files).
    assert.equal(without.length, 1, without.join('\n'));
    assert.match(without[0], /^cid_of_file: op_file's package: target `steps` is not possible .*op_file/);
    assert.equal(compared.length, examples.length - 1);
  });
});

test('the palette: every operation, grouped, found by name, type or description', async () => {
  await withEditor('palette', async (page) => {
    const registry = await (await fetch(`${base}/v1/operations`)).json();
    const names = [...new Set(registry.map((op) => op.name))].sort();
    assert.deepEqual((await page.locator('.palette-item[data-op]').evaluateAll((items) => items.map((i) => i.dataset.op))).sort(), names);
    assert.deepEqual(await page.locator('.group h3').allTextContents(), ['FLOWCONTROL', 'IMAGE', 'SYS']);
    assert.match(await page.locator('.palette-item[data-op="op_cid"]').textContent(), /input: Multihash → Cid.*base: base32 \| base58btc \| base64url/s);
    await page.locator('#search').fill('multihash');
    assert.deepEqual(await page.locator('.palette-item[data-op]').evaluateAll((items) => items.map((i) => i.dataset.op)), ['op_cid', 'op_multihash', 'op_multihash_digest']);
    await page.locator('#search').fill('Vec<Bytes>');
    assert.deepEqual(await page.locator('.palette-item[data-op]').evaluateAll((items) => items.map((i) => i.dataset.op)), ['op_concat']);
    await page.locator('#search').fill('dhash');
    assert.deepEqual(await page.locator('.palette-item[data-op]').evaluateAll((items) => items.map((i) => i.dataset.op)), ['op_image_phash']);
    // Enter adds the focused operation.
    await page.locator('.palette-item[data-op="op_image_phash"]').press('Enter');
    await node(page, 'op_image_phash').waitFor();
  });
});

test('a click on any palette entry adds its node, as Enter does; nodes added never overlap', async () => {
  await withEditor('click', async (page) => {
    const names = ['op_utf8', 'op_multihash', 'op_cid', 'op_concat', 'op_collect', 'op_image_decode', 'op_image_pixels', 'op_hamming', 'op_exif'];
    // One entry after another, each added and placed before the next, as a hand clicks.
    const placed = (n) => page.waitForFunction(async (n) => {
      await window.braidEditor.canvas.settled();
      return document.querySelectorAll('rete-node').length === n;
    }, n);
    await page.locator('#add-input').click();
    await placed(2);
    for (const [i, name] of names.entries()) {
      await page.locator(`.palette-item[data-op="${name}"]`).click();
      await placed(i + 3);
    }
    await page.locator(`.palette-item[data-op="op_cid"]`).press('Enter');
    // The output node, the input, the nine clicked and the one added with Enter.
    await placed(names.length + 3);
    const labels = await page.locator('rete-node').evaluateAll((nodes) => nodes.map((n) => n.dataset.label));
    assert.deepEqual(labels.sort(), ['input', ...names, 'op_cid', 'output'].sort(), 'a click or Enter added each, once');
    const boxes = await page.locator('rete-node').evaluateAll((nodes) => nodes.map((n) => {
      const r = n.firstElementChild?.getBoundingClientRect() ?? n.getBoundingClientRect();
      return { label: n.dataset.label, x: r.x, y: r.y, w: r.width, h: r.height };
    }));
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        assert.ok(apart(a, b), `${a.label} and ${b.label} overlap: ${JSON.stringify([a, b])}`);
      }
    }
  });
});

test("a node's problems never cover another node; a large workflow opens readable", async () => {
  await withEditor('room', async (page) => {
    // photo_proof with the decoder's output taken from the steps that use it:
    // four nodes with an open port each, a note hung below each.
    await openProofCut(page, 'source');
    await page.evaluate(() => window.braidEditor.canvas.arrange());
    // (The notes are in the nodes' shadow roots, which locators enter.)
    const notesLocator = page.locator('rete-node [data-testid="node-errors"]');
    await notesLocator.nth(2).waitFor();
    const nodes = [];
    const notes = [];
    for (const n of await page.locator('rete-node').all()) {
      const label = await n.getAttribute('data-label');
      nodes.push({ label, ...(await n.locator('> *').first().boundingBox() ?? await n.boundingBox()) });
      for (const e of await n.locator('[data-testid="node-errors"]').all()) notes.push({ label, ...(await e.boundingBox()) });
    }
    const [w, h] = ['width', 'height'];
    for (const b of [...nodes, ...notes]) Object.assign(b, { w: b[w], h: b[h] });
    assert.ok(notes.length >= 3, JSON.stringify(notes));
    for (const note of notes) {
      for (const other of nodes.filter((n) => n.label !== note.label)) {
        assert.ok(apart(note, other), `${note.label}'s problems cover ${other.label}: ${JSON.stringify([note, other])}`);
      }
    }
    // Forty steps in a row: opened at a zoom where text reads, from the start.
    const steps = [{ operation: 'op_utf8', version: '^0.1' }, ...Array.from({ length: 40 }, (_, i) => ({ operation: i % 2 ? 'op_utf8' : 'op_encode', version: '^0.1' }))];
    const long = { name: 'long', version: '0.1.0', segments: [{ inputs: [-1], sequence: steps }] };
    await page.evaluate((m) => window.braidEditor.open(m), long);
    await checked(page);
    const k = await page.evaluate(() => window.braidEditor.canvas.area.area.transform.k);
    assert.ok(k >= 0.75, `opened at zoom ${k}`);
    const first = await node(page, 'op_utf8').boundingBox();
    const canvas = await page.locator('#canvas').boundingBox();
    assert.ok(first.x >= canvas.x && first.y >= canvas.y && first.x < canvas.x + canvas.width / 2, `the first step is in view: ${JSON.stringify([first, canvas])}`);
  });
});

test('a wrong connection is refused while dragging, with the reason; a cycle too', async () => {
  await withEditor('refused', async (page) => {
    await place(page, 'op_multihash', 20, 20);
    await place(page, 'op_image_decode', 340, 20);
    await place(page, 'op_cid', 340, 380);
    const hash = node(page, 'op_multihash');
    const decode = node(page, 'op_image_decode');
    // Held over the Bytes input: marked refused, the reason said.
    await drag(page, output(hash), input(decode, 0), { release: false });
    assert.equal(await input(decode, 0).evaluate((el) => el.className), 'refused');
    assert.equal(await input(node(page, 'op_cid'), 0).evaluate((el) => el.className), 'fits');
    assert.match(await page.textContent('#status'), /Refused: Multihash into a Bytes input: op_image_decode's input 0 \(`input`\) takes Bytes; op_multihash outputs Multihash/);
    await page.mouse.up();
    assert.equal(await connections(page), 0);
    assert.match(await page.textContent('#status'), /Multihash into a Bytes input/);
    // The fitting one connects; back from the Cid to the hash would be a cycle.
    await connect(page, hash, node(page, 'op_cid'), 0);
    assert.equal(await connections(page), 1);
    await place(page, 'op_collect', 20, 420);
    await connect(page, node(page, 'op_cid'), node(page, 'op_collect'), 0);
    // op_collect's T is Cid now: a Multihash is refused at its next port.
    await drag(page, output(hash), input(node(page, 'op_collect'), 1), { release: false });
    assert.match(await page.textContent('#status'), /Multihash into a Cid input/);
    await page.mouse.up();
    assert.equal(await connections(page), 2);
    // From the end of the chain back to its start: a cycle.
    await drag(page, output(node(page, 'op_collect')), input(hash, 0), { release: false });
    assert.match(await page.textContent('#status'), /Refused: this connection would make a cycle/);
    await page.mouse.up();
    assert.equal(await connections(page), 2);
  });
});

test('a diagnostic is drawn on the node and field it names; fixing it clears it', async () => {
  await withEditor('diagnostic', async (page) => {
    const m = JSON.parse(readFileSync(join(root, 'workflows/dual_cid_of_text.json'), 'utf8'));
    m.segments[2].sequence[0].config.hasher = 'md5';
    await page.evaluate((m) => window.braidEditor.open(m), m);
    await checked(page);
    const list = await page.locator('#diagnostics li').allTextContents();
    assert.equal(list.length, 1, list.join('\n'));
    assert.match(list[0], /does not allow this value for `hasher`/);
    // On the second op_multihash (segment 2), on its hasher field; nowhere else.
    const bad = node(page, 'op_multihash', 1);
    await bad.locator('braid-field div.error select[data-field="hasher"]').waitFor();
    assert.match(await bad.locator('braid-field div.error .msg').textContent(), /does not allow this value for `hasher`/);
    assert.equal(await bad.evaluate((el) => el.data.errors.length), 1);
    assert.equal(await node(page, 'op_multihash', 0).evaluate((el) => el.data.errors.length), 0);
    assert.equal(await node(page, 'op_multihash', 0).locator('[data-testid="node-errors"]').count(), 0);
    await page.screenshot({ path: join(shots, 'error.png') });
    await bad.locator('select[data-field="hasher"]').selectOption('sha2-512');
    await page.waitForFunction(() => document.querySelector('#signature.valid'));
    assert.equal(await page.locator('#diagnostics li').count(), 0);
    assert.equal(await bad.locator('braid-field div.error').count(), 0);
    assert.equal(await bad.evaluate((el) => el.data.errors.length), 0);
    // An exact version instead of the requirement: written so, the node redrawn with its fields.
    await bad.locator('select[data-field="version"]').selectOption('0.1.0');
    await checked(page);
    assert.equal((await page.evaluate(() => window.braidEditor.manifest())).segments[2].sequence[0].version, '0.1.0');
    assert.equal(await bad.locator('select[data-field="hasher"]').inputValue(), 'sha2-512');
    // A step that does not take what the one before gives: said on that step.
    const chain = JSON.parse(readFileSync(join(root, 'workflows/hex_sha256_of_text.json'), 'utf8'));
    chain.segments[0].sequence.splice(2, 1); // op_multihash straight into op_encode
    await page.evaluate((m) => window.braidEditor.open(m), chain);
    await checked(page);
    const encode = node(page, 'op_encode');
    await encode.locator('[data-testid="node-errors"]').waitFor();
    assert.match(await encode.locator('[data-testid="node-errors"]').textContent(), /type mismatch: op_encode takes Bytes, op_multihash outputs Multihash/);
    for (const other of ['op_utf8', 'op_multihash']) assert.equal(await node(page, other).locator('[data-testid="node-errors"]').count(), 0, other);
    // Inputs of two types into op_collect: said on the port that differs.
    const mixed = JSON.parse(readFileSync(join(root, 'workflows/dual_cid_of_text.json'), 'utf8'));
    mixed.segments[2].sequence.pop(); // segment 2 now gives a Multihash, segment 1 a Cid
    await page.evaluate((m) => window.braidEditor.open(m), mixed);
    await checked(page);
    const collect = node(page, 'op_collect');
    await collect.locator('[data-testid="input-1"] braid-socket div.error').waitFor();
    assert.equal(await collect.locator('[data-testid="input-0"] braid-socket div.error').count(), 0);
    assert.match(await collect.locator('[data-testid="node-errors"]').textContent(), /op_collect takes inputs of one type/);
    assert.match(await page.textContent('#diagnostics'), /\/segments\/3\/inputs\/1/);
    // An open port: said in the graph's words, on its node and socket, once,
    // with the JSON pointer beside it.
    await openProofCut(page, 'target');
    await page.waitForFunction(() => /is not connected/.test(document.querySelector('#diagnostics')?.textContent ?? ''));
    await checked(page);
    const items = await page.locator('#diagnostics li').allTextContents();
    assert.equal(items.length, 1, items.join('\n'));
    assert.match(items[0], /^op_image_decode's input 0 \(`\w+`\), a Bytes, is not connected: connect an external input or another step's output of that type to it \/segments\/\d\/inputs$/);
    const decode = node(page, 'op_image_decode');
    await decode.locator('[data-testid="input-0"] braid-socket div.error').waitFor();
    assert.match(await decode.locator('[data-testid="node-errors"]').textContent(), /is not connected/);
  });
});

test('every example workflow opened from its file and saved: the same manifest', async () => {
  await withEditor('examples', async (page) => {
    const files = readdirSync(join(root, 'workflows')).filter((f) => f.endsWith('.json') && f !== 'vectors.json');
    assert.ok(files.length >= 13);
    for (const file of files) {
      const path = join(root, 'workflows', file);
      await page.setInputFiles('#open-file', path);
      await page.waitForFunction((name) => document.querySelector('#wf-name').value === name, JSON.parse(readFileSync(path, 'utf8')).name);
      await page.waitForFunction(() => document.querySelector('#signature.valid'), null, { timeout: 60_000 });
      const download = await saveDownload(page);
      const saved = readFileSync(await download.path(), 'utf8');
      assert.deepEqual(JSON.parse(saved), JSON.parse(readFileSync(path, 'utf8')), file);
      // The same workflow id, as the service computes it.
      const id = async (text) => (await (await fetch(`${base}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })).json()).id;
      assert.equal(await id(saved), await id(readFileSync(path, 'utf8')), file);
    }
    // The JSON beside the canvas, edited and applied, is opened too; JSON that is not a manifest is refused, saying why.
    const salted = { ...JSON.parse(readFileSync(join(root, 'workflows/salted_cid.json'), 'utf8')), name: 'salted_by_hand' };
    await page.locator('#json').fill(JSON.stringify(salted));
    await page.locator('#apply-json').click();
    await page.waitForFunction(() => document.querySelector('#wf-name').value === 'salted_by_hand');
    await page.waitForFunction(() => document.querySelector('#signature').textContent === 'text: String, bytes: Bytes -> Cid');
    assert.deepEqual(await page.evaluate(() => window.braidEditor.manifest()), salted);
    await page.locator('#json').fill('{"name": ');
    await page.locator('#apply-json').click();
    assert.match(await page.textContent('#status'), /^Not JSON: /);
    assert.equal(await page.inputValue('#wf-name'), 'salted_by_hand');
  });
});

test('undo, redo, delete and duplicate from the keyboard; the draft kept across a reload', async () => {
  await withEditor('keyboard', async (page) => {
    const count = () => page.locator('rete-node').count();
    await place(page, 'op_utf8', 20, 20);
    await place(page, 'op_multihash', 340, 20);
    await connect(page, node(page, 'op_utf8'), node(page, 'op_multihash'), 0);
    assert.equal(await count(), 3);
    // Select op_multihash by its title, duplicate it (the copy is selected), delete the copy.
    await node(page, 'op_multihash').locator('[data-testid="title"]').click();
    await page.keyboard.press('Control+d');
    await page.waitForFunction(() => document.querySelectorAll('rete-node').length === 4);
    assert.equal(await node(page, 'op_multihash', 1).count(), 1);
    await page.keyboard.press('Delete');
    await page.waitForFunction(() => document.querySelectorAll('rete-node').length === 3);
    // Delete the original (with its connection), then undo: it is back, connected; redo deletes it again.
    await node(page, 'op_multihash').locator('[data-testid="title"]').click();
    await page.keyboard.press('Delete');
    await page.waitForFunction(() => document.querySelectorAll('rete-node').length === 2);
    assert.equal(await connections(page), 0);
    await page.keyboard.press('Control+z');
    await page.waitForFunction(() => window.braidEditor.canvas.editor.getConnections().length === 1);
    assert.equal(await count(), 3);
    await page.keyboard.press('Control+Shift+z');
    await page.waitForFunction(() => document.querySelectorAll('rete-node').length === 2);
    assert.equal(await connections(page), 0);
    // The draft is kept: a reload opens it again.
    await page.waitForFunction(() => /op_utf8/.test(localStorage.getItem('braid.draft')) && !/op_multihash/.test(localStorage.getItem('braid.draft')));
    await page.reload();
    await page.waitForFunction(() => window.braidEditor?.ready);
    assert.deepEqual(await page.locator('rete-node').evaluateAll((nodes) => nodes.map((n) => n.dataset.label).sort()), ['op_utf8', 'output']);
  });
});

test("the editor's type rules are the validator's: every operation's output into every input", async () => {
  const registry = await (await fetch(`${base}/v1/operations`)).json();
  const ops = registry.filter((op) => op.manifest.output && !isFlow(op.manifest));
  const validate = async (m) => {
    const res = await fetch(`${base}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
    return res.ok ? [] : (await res.json()).diagnostics;
  };
  let fits = 0;
  let refused = 0;
  for (const a of ops) {
    for (const b of registry.filter((op) => op.manifest.output)) {
      const ports = isFlow(b.manifest) ? 1 : b.manifest.inputs.length;
      for (let k = 0; k < ports; k++) {
        // Segment 0: `a` on external inputs; segment 1: `b`, port k from segment 0, its other ports external.
        const m = {
          name: 'pair', version: '0.1.0', description: `${a.name} into ${b.name} input ${k}`,
          segments: [
            { inputs: a.manifest.inputs.map(() => -1), sequence: [{ operation: a.name, version: a.version }] },
            { inputs: Array.from({ length: ports }, (_, p) => (p === k ? 0 : -1)), sequence: [{ operation: b.name, version: b.version }] },
          ],
        };
        const graph = fromManifest(m);
        const [from, to] = [...graph.nodes.values()].filter((n) => n.kind === 'op').map((n) => n.id);
        graph.edges = graph.edges.filter((e) => !(e.from === from && e.to === to));
        const verdict = canConnect(graph, from, to, k, registry);
        const diagnostics = await validate(m);
        const pair = `${a.name} (${a.manifest.output}) into ${b.name} input ${k} (${b.manifest.inputs[k]}): ${verdict.reason ?? 'fits'}; ${JSON.stringify(diagnostics)}`;
        assert.equal(verdict.ok, diagnostics.length === 0, pair);
        if (verdict.ok) fits++;
        else refused++;
      }
    }
  }
  assert.ok(fits > 20 && refused > 100, `${fits} fit, ${refused} refused`);
});
