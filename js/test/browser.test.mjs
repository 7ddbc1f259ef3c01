// The generated packages in a real browser: headless Chromium (Debian's,
// driven by playwright-core) loads each workflow's pkg/web from a page served
// on 127.0.0.1 and runs it; a small app importing pkg/bundler, bundled with
// esbuild, runs there too. Outputs are compared with the vectors the Node
// and native builds are checked against.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'esbuild';
import { wasmModules } from '../lib/esbuild-wasm.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const out = process.env.BRAID_WF_OUT ?? `${root}/target/wf`;
const vectors = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8')).cases;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const app = mkdtempSync(join(tmpdir(), 'braid-app-'));
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };

// /wf/<name>/... -> target/wf/<name>/pkg/web/...; /app/... -> the bundled app;
// /page.html -> a page that runs a script given in the query.
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let file;
  if (url.pathname === '/page.html') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><meta charset="utf-8"><script type="module" src="${url.searchParams.get('script')}"></script>`);
    return;
  }
  const m = url.pathname.match(/^\/wf\/([a-z0-9_]+)\/(.+)$/);
  if (m) file = join(out, m[1], 'pkg/web', normalize(m[2]));
  else if (url.pathname.startsWith('/app/')) file = join(app, normalize(url.pathname.slice(5)));
  else if (url.pathname.startsWith('/tests/')) file = join(app, 'tests', normalize(url.pathname.slice(7)));
  if (!file || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
  res.end(readFileSync(file));
});

let browser;
let base;

before(async () => {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
});
after(async () => {
  await browser?.close();
  server.close();
});

/** Runs `script` (an ES module at /tests/...) in a fresh page; returns window.result. */
async function inPage(name, source) {
  const dir = join(app, 'tests');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.mjs`), source);
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(`${base}/page.html?script=/tests/${name}.mjs`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60_000 });
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
  assert.match(result[0], /salted_cid input 0: expected string, found a number/);
  assert.match(result[1], /expected an Array of inputs, found null/);
  assert.match(result[2], /expected 2 input\(s\), found 1/);
  assert.match(result[3], /^bafkrei/, 'still works after the errors');
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
