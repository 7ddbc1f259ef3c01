// The example workflows as HTTP functions (`braid build --targets http`,
// built by make test-workflows into target/wf-component/<name>/http): each
// a component exporting wasi:http/incoming-handler, served by the hosts
// people deploy to, `wasmtime serve` (the wasmtime CLI of the engine's LTS
// line, which scripts/setup.sh installs) and `jco serve` (npm
// @bytecodealliance/jco): the reference outputs as the npm packages give
// them, the signature on GET, and the run endpoint's errors and statuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { inputValue } from '../lib/reference.mjs';
import { SALTED_PROBLEMS } from '../lib/run-contract.mjs';
import { freePort } from '../lib/cluster.mjs';
import { killHard } from '../lib/server.mjs';
import { fetchPatiently, until } from '../lib/wait.mjs';
import { braid, root, wfOut as packages } from '../lib/paths.mjs';
import { run } from '../lib/run.mjs';

const require = createRequire(import.meta.url);
const components = `${root}/target/wf-component`;
const committed = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8'));
const wasmtime = process.env.BRAID_WASMTIME ?? 'wasmtime';
const jco = `${root}/js/node_modules/.bin/jco`;

const HOSTS = {
  'wasmtime serve': (wasm, port, flags) => [wasmtime, ['serve', ...flags, '--addr', `127.0.0.1:${port}`, wasm]],
  'jco serve': (wasm, port, flags) => [jco, ['serve', ...flags, '--host', '127.0.0.1', '--port', String(port), wasm]],
};

/** `name`'s HTTP function (or the one at `wasm`) served by `host` (with its `flags`), once it answers: { url, stop }. */
async function serve(host, name, flags = [], wasm = `${components}/${name}/http/wf_${name}.wasm`) {
  assert.ok(existsSync(wasm), `${wasm} (make test-workflows builds it)`);
  const port = await freePort();
  const [cmd, args] = HOSTS[host](wasm, port, flags);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/`;
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`${host} exited (${child.exitCode}):\n${log}`);
    return (await fetchPatiently(url, {}, { timeoutMs: 1000 }).catch(() => null))?.ok;
  }, () => `${host} did not answer for ${name}:\n${log}`);
  return { url, stop: () => killHard(child), log: () => log };
}

/** An input as the run endpoint's JSON takes it: bytes as base64. */
const wireInput = (value) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value);

/** A value as the run endpoint's JSON gives it: bytes as base64 ([] when empty). */
function wire(value) {
  if (value instanceof Uint8Array) return value.length === 0 ? [] : Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(wire);
  if (typeof value === 'bigint') return Number(value);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wire(v)]));
  return value;
}

const post = (url, body, headers = {}) => fetch(url, { method: 'POST', headers, body });
const json = { 'content-type': 'application/json' };
const built = () => (existsSync(components) ? readdirSync(components) : []).filter((n) => existsSync(`${components}/${n}/http`));

for (const host of Object.keys(HOSTS)) {
  test(`${host}: every example workflow's HTTP function gives the reference outputs, as the npm packages give them`, async () => {
    const names = built();
    const cases = committed.cases.filter((c) => names.includes(c.workflow));
    const ran = new Set();
    for (const name of new Set(cases.map((c) => c.workflow))) {
      const server = await serve(host, name);
      try {
        const pkg = require(`${packages}/${name}/pkg/node/wf_${name}.js`);
        for (const c of cases.filter((c) => c.workflow === name)) {
          const inputs = c.calls.flat().map((s) => inputValue(s, root));
          const res = await post(server.url, JSON.stringify(inputs.map(wireInput)), json);
          const text = await res.text();
          assert.equal(res.status, 200, `${name}: ${text}`);
          assert.deepEqual(JSON.parse(text), wire(pkg.runSync(inputs)), `${name}: the HTTP function and the npm package`);
          assert.deepEqual(JSON.parse(text), wire(c.output), `${name}: the reference`);
          ran.add(name);
        }
      } finally {
        server.stop();
      }
    }
    assert.equal(ran.size, 6, `every workflow of the vectors with a Wasm build ran: ${[...ran]}`);
  });

  test(`${host}: inputs by name, in order, as parts or raw; the signature on GET; the run endpoint's errors`, async () => {
    const salted = await serve(host, 'salted_cid');
    const proof = await serve(host, 'photo_proof');
    try {
      const pkg = require(`${packages}/salted_cid/pkg/node/wf_salted_cid.js`);
      const expected = pkg.runSync(['salt', new TextEncoder().encode('hello')]);
      const hello = Buffer.from('hello').toString('base64');
      for (const body of [{ text: 'salt', bytes: hello }, ['salt', hello]]) {
        const res = await post(salted.url, JSON.stringify(body), json);
        assert.equal(res.status, 200);
        assert.equal(await res.json(), expected, JSON.stringify(body));
      }
      const form = new FormData();
      form.append('bytes', new Blob(['hello']));
      form.append('text', 'salt');
      const multipart = await post(salted.url, form);
      assert.equal(multipart.status, 200);
      assert.equal(await multipart.json(), expected, 'multipart');

      const signature = await (await fetch(salted.url)).json();
      assert.equal(signature.workflow, 'salted_cid');
      assert.equal(signature.signature, 'text: String, bytes: Bytes -> Cid');
      assert.deepEqual(signature.inputs, ['text', 'bytes']);
      assert.equal(signature.input_limit, 16 << 20);

      // The same problems, statuses and messages as POST /v1/workflows/{id}/run.
      for (const [body, headers, status, detail] of SALTED_PROBLEMS) {
        const res = await post(salted.url, body, headers);
        assert.equal(res.headers.get('content-type'), 'application/problem+json');
        const problem = await res.json();
        assert.equal(res.status, status, JSON.stringify(problem));
        assert.equal(problem.status, status);
        assert.match(problem.detail, detail);
      }
      assert.equal((await fetch(salted.url, { method: 'PUT', body: '[]' })).status, 405);
      // HEAD: GET's status and type, no body (and no length the host would hold it to).
      const head = await fetch(salted.url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-type'), 'application/json');
      assert.equal(await head.text(), '');

      // One Bytes input: the raw body; a failure is a 422 with the npm package's message.
      const proofPkg = require(`${packages}/photo_proof/pkg/node/wf_photo_proof.js`);
      const photo = readFileSync(`${root}/workflows/samples/images/photo.jpg`);
      const answer = await post(proof.url, photo, { 'content-type': 'image/jpeg' });
      const text = await answer.text();
      assert.equal(answer.status, 200, text);
      assert.deepEqual(JSON.parse(text), wire(proofPkg.runSync([new Uint8Array(photo)])));
      const failed = await post(proof.url, 'not a photo');
      const failure = await failed.json();
      assert.equal(failed.status, 422, JSON.stringify(failure));
      assert.match(failure.detail, /^the workflow failed \(invalid-input\): op_image_decode: invalid input: not a PNG or JPEG/);
      // Over the input limit: 413, whatever the host.
      const over = await post(proof.url, new Uint8Array((16 << 20) + 1));
      assert.equal(over.status, 413);
      assert.match((await over.json()).detail, /over the limit of 16777216 bytes/);
    } finally {
      salted.stop();
      proof.stop();
    }
  });
}

test('a workflow that streams reads a raw body in chunks: 12 MB through a 4 MiB memory under wasmtime serve', async () => {
  const server = await serve('wasmtime serve', 'cidv1_from_bytes', ['-W', `max-memory-size=${4 << 20}`]);
  try {
    const data = new Uint8Array(12_000_000).map((_, i) => (i * 7 + 3) & 255);
    const res = await post(server.url, data);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const pkg = require(`${packages}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes.js`);
    assert.equal(JSON.parse(text), pkg.runSync([data]));
    // As JSON the input is held whole: over the memory, the instance traps
    // (wasmtime serve answers 500, or drops the connection mid-upload).
    const whole = await post(server.url, JSON.stringify([Buffer.from(data).toString('base64')]), json).catch(() => null);
    assert.ok(whole === null || whole.status === 500, `${whole?.status}`);
  } finally {
    server.stop();
  }
});

test('the build sets the input limit (braid build --http-input-limit): past it 413, whatever the host', async () => {
  const out = mkdtempSync(join(tmpdir(), 'braid-http-limit-'));
  try {
    await run(braid, ['build', `${root}/workflows/salted_cid.json`, '--targets', 'http', '--http-input-limit', '1', '-o', out]);
    // The report says what was compiled in.
    assert.equal(JSON.parse(readFileSync(`${out}/report.json`, 'utf8')).http_input_limit_bytes, 1 << 20);
    for (const host of Object.keys(HOSTS)) {
      const server = await serve(host, 'salted_cid', [], `${out}/http/wf_salted_cid.wasm`);
      try {
        assert.equal((await (await fetch(server.url)).json()).input_limit, 1 << 20, host);
        // {"text":"...","bytes":""}: 22 bytes around the text; exactly the limit, then one more.
        const body = (n) => JSON.stringify({ text: 'a'.repeat(n - 22), bytes: '' });
        assert.equal(body(1 << 20).length, 1 << 20);
        const at = await post(server.url, body(1 << 20), json);
        assert.equal(at.status, 200, `${host}: ${await at.text()}`);
        const over = await post(server.url, body((1 << 20) + 1), json);
        const problem = await over.json();
        assert.equal(over.status, 413, `${host}: ${JSON.stringify(problem)}`);
        assert.equal(problem.detail, 'the input is over the limit of 1048576 bytes', host);
      } finally {
        server.stop();
      }
    }
    // Not a number of MiB between 1 and 1024: refused before anything is built.
    await assert.rejects(run(braid, ['build', `${root}/workflows/salted_cid.json`, '--targets', 'http', '--http-input-limit', '0', '-o', out]), /--http-input-limit/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
