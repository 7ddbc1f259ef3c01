// The generated packages in a real browser: headless Chromium (Debian's,
// driven by playwright-core) loads each workflow's pkg/web from a page served
// on 127.0.0.1 and runs it; a small app importing pkg/bundler, bundled with
// esbuild, runs there too. Outputs are compared with the vectors the Node
// and native builds are checked against.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { build } from 'esbuild';
import { wasmModules } from '../lib/esbuild-wasm.mjs';
import { cid } from '../lib/reference.mjs';
import { CHROMIUM, CHROMIUM_FLAGS, serve } from '../lib/static-server.mjs';
import { root, wfOut as out, opPkgs as ops } from '../lib/paths.mjs';

const vectors = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8')).cases;
const app = mkdtempSync(join(tmpdir(), 'braid-app-'));

let browser;
let base;
let server;

// /wf/<name>/... -> target/wf/<name>/pkg/web/...; /ops/<op>/web/... -> the
// operation packages; /lib/... -> js/lib; /app/... -> the bundled app and the
// test scripts; /page.html?script=... runs one of them.
before(async () => {
  // Every workflow with vectors and a web package (cid_of_file reads files: native only), and a test one.
  const wfs = [...new Set(vectors.map((c) => c.workflow).filter((w) => w !== 'cid_of_file')), 'concat_hex', 'decoded_images', 'photo_proof', 'thumbnail_hashes', 'trapping'];
  const mounts = { '/app/': app, '/lib/': join(root, 'js/lib'), '/ops/': ops, '/images/': join(root, 'workflows/samples/images') };
  for (const w of wfs) mounts[`/wf/${w}/`] = join(out, w, 'pkg/web');
  server = await serve(mounts);
  base = server.base;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
});
after(async () => {
  await browser?.close();
  server?.close();
});

/**
 * Runs `script` (an ES module at /tests/...) in a fresh page; returns
 * window.result. With `files`, the driver chooses them in the page's
 * `<input type=file>` once the script has made one.
 */
async function inPage(name, source, { files } = {}) {
  const dir = join(app, 'tests');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.mjs`), source);
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(`${base}/page.html?script=/app/tests/${name}.mjs`);
    if (files) await page.setInputFiles('input[type=file]', files);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 120_000 });
    const result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    return result;
  } finally {
    await page.close();
  }
}

const INPUTS = `
  // input() of js/lib/reference.mjs: 11 bytes is "hello world", else the pattern.
  const pattern = (n) => {
    if (n === 11) return new TextEncoder().encode('hello world');
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 0xff;
    return b;
  };
  const value = (s) => ('pattern' in s ? pattern(s.pattern) : s.text);`;

test('a hundred traps in a row in Chromium, then correct answers: the module resets after each (and after the outermost call, for a trap inside another)', async () => {
  const result = await inPage('traps', `
    import init, * as wf from '/wf/trapping/wf_trapping.js';
    import { nestedTrapChecks, trapChecks } from '/lib/traps.mjs';
    try {
      await init();
      window.result = { problems: [...(await trapChecks(wf)), ...(await nestedTrapChecks(wf))] };
    } catch (e) { window.result = { error: String(e) }; }`);
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(result.problems, []);
});

test('every web package runs in Chromium and gives the reference outputs (next and run)', async () => {
  const cases = vectors.filter((c) => c.workflow !== 'cid_of_file');
  const byWorkflow = {};
  for (const c of cases) (byWorkflow[c.workflow] ??= []).push(c);
  for (const [name, list] of Object.entries(byWorkflow)) {
    const result = await inPage(`web_${name}`, `${INPUTS}
      import init, { Workflow, run } from '/wf/${name}/wf_${name}.js';
      try {
        await init();
        const cases = ${JSON.stringify(list.map((c) => c.calls))};
        const outputs = [];
        for (const calls of cases) {
          const wf = new Workflow();
          let step;
          for (const call of calls) step = await wf.next(call.map(value));
          outputs.push({ next: step.output, run: await run(calls.flat().map(value)), done: step.done, timed: typeof step.totalTime === 'number' });
        }
        window.result = { outputs };
      } catch (e) { window.result = { error: String(e) }; }`);
    assert.equal(result.error, undefined, result.error);
    list.forEach((c, i) => {
      assert.deepEqual(result.outputs[i].next, c.output, `${name} case ${i} (next)`);
      assert.deepEqual(result.outputs[i].run, c.output, `${name} case ${i} (run)`);
      assert.equal(result.outputs[i].done, true);
      assert.equal(result.outputs[i].timed, true, 'performance.now() gives step times in the browser');
    });
  }
});

test('a value type of one\'s own in Chromium: decoded images as plain objects, suspend and resume, bad objects as Errors', async () => {
  const result = await inPage('web_images', `
    import init, { Workflow, run } from '/wf/decoded_images/wf_decoded_images.js';
    const bytes = async (name) => new Uint8Array(await (await fetch('/images/' + name)).arrayBuffer());
    try {
      await init();
      const given = { width: 1, height: 1, pixels: new Uint8Array([1, 2, 3, 4]) };
      const out = {};
      for (const name of ['photo.png', 'alpha.png', 'gray.png', 'photo.jpg']) {
        const [image, same] = await run([await bytes(name), given]);
        const reference = await bytes(name + '.rgba');
        let sum = 0, max = 0;
        for (let i = 0; i < reference.length; i++) { const d = Math.abs(image.pixels[i] - reference[i]); sum += d; max = Math.max(max, d); }
        out[name] = { width: image.width, height: image.height, length: image.pixels.length, isBytes: image.pixels instanceof Uint8Array,
                      mean: sum / reference.length, max, same: JSON.stringify([...same.pixels]) === '[1,2,3,4]' && same.width === 1 };
      }
      const wf = new Workflow();
      await wf.next([await bytes('photo.png')]);
      const resumed = Workflow.resume(wf.suspend());
      const step = await resumed.next([given]);
      out.resumed = { done: step.done, width: step.output[0].width };
      try { await run([await bytes('photo.png'), { ...given, height: 'tall' }]); out.bad = 'no error'; }
      catch (e) { out.bad = e instanceof Error && !(e instanceof WebAssembly.RuntimeError) ? e.message : 'not an Error: ' + e; }
      window.result = out;
    } catch (e) { window.result = { error: String(e) }; }`);
  assert.equal(result.error, undefined, result.error);
  for (const [name, w, h] of [['photo.png', 64, 48], ['alpha.png', 33, 17], ['gray.png', 40, 30], ['photo.jpg', 64, 48]]) {
    const r = result[name];
    assert.deepEqual([r.width, r.height, r.length, r.isBytes, r.same], [w, h, w * h * 4, true, true], name);
    if (name.endsWith('.png')) assert.equal(r.max, 0, `${name}: pixels equal pngjs's`);
    else assert.ok(r.mean < 1.5 && r.max <= 24, `${name}: mean ${r.mean}, max ${r.max}`);
  }
  assert.deepEqual(result.resumed, { done: true, width: 64 });
  assert.match(result.bad, /decoded_images input 1\.height: expected number .*found a string/);
});

test('the image workflows in Chromium: photo_proof as blockhash-core computes it, a type shared across crates suspended and resumed', async () => {
  const result = await inPage('web_photo', `
    import initProof, { run as proof } from '/wf/photo_proof/wf_photo_proof.js';
    import initThumbs, { Workflow, run as thumbs } from '/wf/thumbnail_hashes/wf_thumbnail_hashes.js';
    const bytes = async (name) => new Uint8Array(await (await fetch('/images/' + name)).arrayBuffer());
    try {
      await initProof();
      await initThumbs();
      const out = {};
      for (const name of ['photo.png', 'alpha.png', 'photo.jpg']) out[name] = await proof([await bytes(name)]);
      try { await proof([(await bytes('photo.jpg')).subarray(0, 1000)]); out.truncated = 'no error'; }
      catch (e) { out.truncated = e instanceof Error && !(e instanceof WebAssembly.RuntimeError) ? e.message : 'not an Error: ' + e; }
      const image = { width: 64, height: 48, pixels: await bytes('photo.png.rgba') };
      const size = { width: 32, height: 24 };
      const square = { width: 32, height: 32 };
      out.thumbs = await thumbs([image, size, square]);
      const wf = new Workflow();
      await wf.next([image, size]);
      const resumed = Workflow.resume(wf.suspend());
      const step = await resumed.next([square]);
      out.resumed = step.output;
      window.result = out;
    } catch (e) { window.result = { error: String(e) }; }`);
  assert.equal(result.error, undefined, result.error);
  const proofs = JSON.parse(readFileSync(join(root, 'workflows/samples/images/proofs.json'), 'utf8'));
  for (const name of ['photo.png', 'alpha.png']) assert.deepEqual(result[name], proofs[name], name);
  assert.equal(result['photo.jpg'].fileCid, proofs['photo.jpg'].fileCid);
  assert.match(result.truncated, /JPEG/);
  const node = createRequire(import.meta.url)(join(out, 'thumbnail_hashes/pkg/node/wf_thumbnail_hashes.js'));
  const expected = await node.run([{ width: 64, height: 48, pixels: new Uint8Array(readFileSync(join(root, 'workflows/samples/images/photo.png.rgba'))) }, { width: 32, height: 24 }, { width: 32, height: 32 }]);
  assert.deepEqual(result.thumbs, expected, 'Chromium and Node agree');
  assert.deepEqual(result.resumed, expected);
});

test('streaming in Chromium: a File chosen in an <input type=file>, Blobs, ReadableStreams and chunks of 1 byte to 1 MiB give what runSync gives; bad use is an Error', async () => {
  const file = join(app, 'chosen.bin');
  const chosen = Buffer.alloc(3 * (1 << 20) + 5);
  for (let i = 0; i < chosen.length; i++) chosen[i] = (i * 7 + (i >> 11)) & 0xff;
  writeFileSync(file, chosen);
  const result = await inPage(
    'stream',
    `${INPUTS}
    import init, { runSync, runStream, stream } from '/wf/cidv1_from_bytes/wf_cidv1_from_bytes.js';
    await init();
    const input = document.createElement('input');
    input.type = 'file';
    document.body.append(input);
    const chosen = new Promise((resolve) => input.addEventListener('change', () => resolve(input.files[0])));
    const cut = (bytes, size) => { const chunks = []; for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size)); return chunks; };
    const streamed = (chunks) => { const s = stream(); try { for (const c of chunks) s.update(c); return s.finish(); } finally { s.free(); } };
    const mismatches = [];
    for (const n of [0, 1, 1000, 3 * 1048576 + 5]) {
      const bytes = pattern(n);
      const whole = runSync([bytes]);
      for (const size of n <= 1000 ? [1, 7, 1023, 1048576] : [65537, 1048576]) {
        if (streamed(cut(bytes, size)) !== whole) mismatches.push(n + ' bytes in chunks of ' + size);
      }
      if ((await runStream(new Blob([bytes]))) !== whole) mismatches.push('Blob of ' + n);
      const chunks = cut(bytes, 99991);
      const web = new ReadableStream({ pull(c) { const next = chunks.shift(); if (next) c.enqueue(next); else c.close(); } });
      if ((await runStream(web)) !== whole) mismatches.push('ReadableStream of ' + n);
    }
    const file = await chosen;
    const fromFile = await runStream(file);
    const wholeFile = runSync([new Uint8Array(await file.arrayBuffer())]);
    const errors = [];
    const s = stream();
    const detached = new Uint8Array(new ArrayBuffer(8));
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    for (const bad of ['text', 7, [1], detached, new Proxy(new Uint8Array(2), {})]) {
      try { s.update(bad); errors.push('no error'); } catch (e) { errors.push(e instanceof Error && !(e instanceof WebAssembly.RuntimeError) ? e.message : 'not an Error: ' + e); }
    }
    s.update(pattern(1000));
    const afterBad = s.finish() === runSync([pattern(1000)]);
    try { s.update(pattern(1)); errors.push('no error'); } catch (e) { errors.push(e.message); }
    s.free();
    try { s.finish(); errors.push('no error'); } catch (e) { errors.push(e.message); }
    let rejected;
    try { await runStream('not a source'); } catch (e) { rejected = e.message; }
    window.result = { mismatches, fromFile, wholeFile, size: file.size, errors, afterBad, rejected };`,
    { files: file },
  );
  assert.deepEqual(result.mismatches, []);
  assert.equal(result.size, chosen.length);
  assert.equal(result.fromFile, result.wholeFile);
  assert.equal(result.fromFile, cid(chosen));
  assert.match(result.errors[0], /cidv1_from_bytes stream chunk: expected Uint8Array, found a string/);
  assert.match(result.errors[1], /found a number/);
  assert.match(result.errors[2], /found an Array/);
  assert.match(result.errors[3], /found a Uint8Array whose ArrayBuffer is detached/);
  assert.match(result.errors[4], /found a Proxy or other object that is not a real Uint8Array/);
  assert.equal(result.afterBad, true, 'the stream goes on after bad chunks');
  assert.match(result.errors[5], /this stream is finished/);
  assert.match(result.errors[6], /this object was freed/);
  assert.match(result.rejected, /runStream: expected a ReadableStream, a Blob or File/);
});

test('bad calls in the browser reject with an Error, not a trap', async () => {
  const result = await inPage('web_errors', `
    import init, { Workflow, run } from '/wf/salted_cid/wf_salted_cid.js';
    await init();
    const messages = [];
    for (const call of [() => run([1, new Uint8Array()]), () => new Workflow().next(null), () => run(['only'])]) {
      try { await call(); messages.push('no error'); } catch (e) { messages.push(e instanceof Error && !(e instanceof WebAssembly.RuntimeError) ? e.message : 'not an Error: ' + e); }
    }
    messages.push(await run(['a', new Uint8Array([1])]));
    window.result = messages;`);
  assert.match(result[0], /salted_cid input 0 \(text\): expected string, found a number/);
  assert.match(result[1], /expected an Array of inputs, found null/);
  assert.match(result[2], /expected 2 input\(s\), found 1/);
  assert.match(result[3], /^bafkrei/, 'still works after the errors');
});

test('hostile arguments in Chromium: plain Errors, real values, and right answers after 5,000 such calls (and freed or forged Workflows, views of its own memory)', async () => {
  // The cases of js/test/hostile.test.mjs (js/lib/hostile.mjs), on the web packages.
  const problems = await inPage('hostile', `
    import { calledBack, check, forgedObjects, freedCalls, freedWhileRead, ownMemory, readsOnce, storm, subjects } from '/lib/hostile.mjs';
    import initCid, * as cid from '/wf/cidv1_from_bytes/wf_cidv1_from_bytes.js';
    import initHex, * as concatHex from '/wf/concat_hex/wf_concat_hex.js';
    import initMultihash, * as opMultihash from '/ops/op_multihash/web/op_multihash.js';
    import initConcat, * as opConcat from '/ops/op_concat/web/op_concat.js';
    import initCollect, * as opCollect from '/ops/op_collect/web/op_collect.js';
    try {
      const [cidExports] = await Promise.all([initCid(), initHex(), initMultihash(), initConcat(), initCollect()]);
      const mods = { cid, concatHex, opMultihash, opConcat, opCollect };
      const problems = [];
      for (const subject of subjects(mods)) problems.push(...(await check(subject)));
      for (const subject of subjects(mods)) problems.push(...(await storm(subject, 5000)));
      const bytes = new Uint8Array([1, 2, 3]);
      const good = { args: () => [[bytes]], output: cid.runSync([bytes]) };
      problems.push(...(await freedCalls(cid, good)));
      problems.push(...(await forgedObjects(cid, good)));
      problems.push(...(await readsOnce(cid, good)));
      problems.push(...(await freedWhileRead(cid, good)));
      problems.push(...(await calledBack(cid, good)));
      problems.push(...(await ownMemory(cid, cidExports.memory, good)));
      window.result = problems;
    } catch (e) {
      window.result = ['the page threw: ' + e];
    }`);
  assert.deepEqual(problems, []);
});

test('an app importing pkg/bundler, bundled with esbuild, runs in Chromium', async () => {
  const c = vectors.find((v) => v.workflow === 'dual_cid_of_text');
  writeFileSync(
    join(app, 'main.mjs'),
    `import { run } from ${JSON.stringify(`${out}/dual_cid_of_text/pkg/bundler/wf_dual_cid_of_text.js`)};
     window.result = { output: await run([${JSON.stringify(c.calls[0][0].text)}]) };`,
  );
  await build({
    entryPoints: [join(app, 'main.mjs')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    outfile: join(app, 'bundle.js'),
    plugins: [wasmModules],
    logLevel: 'error',
  });
  const result = await inPage('bundled', `import '/app/bundle.js';`);
  assert.deepEqual(result.output, c.output);
});
