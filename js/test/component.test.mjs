// The example workflows as Wasm components (`braid build --targets
// component`, built by make test-workflows into target/wf-component), run
// in Node through jco's transpile (@bytecodealliance/jco-transpile): each
// imports nothing (no WASI), gives the reference outputs and the same
// outputs and error messages as the workflow's npm package; and the
// service builds the same component bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { inputValue } from '../lib/reference.mjs';
import { SALTED_PROBLEMS } from '../lib/run-contract.mjs';
import { killHard, spawnServer, waitJob } from '../lib/server.mjs';
import { root, wfOut as packages } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const components = `${root}/target/wf-component`;
const committed = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8'));

/** The component of workflow `name` transpiled by jco into target/jco/<name>, imported. */
async function load(name) {
  const wasm = readFileSync(`${components}/${name}/component/wf_${name}.wasm`);
  // A failed run throws its `run-error` record itself.
  const { files, imports } = await transpileBytes(wasm, { name, noComponentErrorWrapping: true });
  // No WASI, nothing from the host: the module needs no shim to run.
  assert.deepEqual(imports, [], `${name} imports nothing`);
  const out = `${root}/target/jco/${name}`;
  rmSync(out, { recursive: true, force: true });
  for (const [file, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    writeFileSync(join(out, file), bytes);
  }
  return import(pathToFileURL(join(out, `${name}.js`)).href);
}

const built = () => (existsSync(components) ? readdirSync(components) : []).filter((n) => existsSync(`${components}/${n}/component`));

test('every example workflow with Node packages was built as a component, with its WIT world', () => {
  const names = built();
  for (const name of ['cidv1_from_bytes', 'salted_cid', 'photo_proof', 'photo_similarity', 'dual_cid_of_text']) {
    assert.ok(names.includes(name), `${name} in ${names}`);
    const wit = readFileSync(`${components}/${name}/component/world.wit`, 'utf8');
    assert.match(wit, /world workflow \{/);
  }
  const salted = readFileSync(`${components}/salted_cid/component/world.wit`, 'utf8');
  assert.match(salted, /export run: func\(%text: string, %bytes: list<u8>\) -> result<string, run-error>;/);
  assert.match(readFileSync(`${components}/photo_proof/component/world.wit`, 'utf8'), /record %photo-proof \{\n {4}%file-cid: string,/);
});

test('components run in Node through jco: the reference outputs, as the npm packages give them', async () => {
  const names = built();
  const ran = new Set();
  for (const c of committed.cases.filter((c) => names.includes(c.workflow))) {
    const component = await load(c.workflow);
    const inputs = c.calls.flat().map((s) => inputValue(s, root));
    const output = component.run(...inputs);
    const pkg = require(`${packages}/${c.workflow}/pkg/node/wf_${c.workflow}.js`);
    assert.deepEqual(output, pkg.runSync(inputs), `${c.workflow}: the component and the npm package`);
    assert.deepEqual(output, c.output, `${c.workflow}: the reference`);
    ran.add(c.workflow);
  }
  assert.equal(ran.size, 6, `every workflow of the vectors with a Wasm build ran: ${[...ran]}`);
});

test('a workflow that streams exports streaming.Stream: chunks in, the output of run on their concatenation', async () => {
  const component = await load('cidv1_from_bytes');
  const pkg = require(`${packages}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes.js`);
  const data = new Uint8Array(300_001).map((_, i) => (i * 31 + 7) & 255);
  for (const size of [1, 4096, 65_536, data.length]) {
    const stream = new component.streaming.Stream();
    for (let at = 0; at < data.length; at += size) stream.update(data.subarray(at, at + size));
    stream.update(new Uint8Array(0));
    assert.equal(stream.finish(), component.run(data), `chunks of ${size}`);
  }
  assert.equal(component.run(data), pkg.runSync([data]));
  const done = new component.streaming.Stream();
  done.finish();
  assert.throws(() => done.finish(), (e) => {
    assert.deepEqual({ ...e }, { kind: 'invalid-input', message: 'this stream has finished; start another' });
    return true;
  });
  // A workflow that does not stream has no `streaming`.
  assert.equal((await load('photo_proof')).streaming, undefined);
});

test('photo_proof as a component gives the npm package proof (a record) of every sample photo', async () => {
  const component = await load('photo_proof');
  const pkg = require(`${packages}/photo_proof/pkg/node/wf_photo_proof.js`);
  const samples = readdirSync(`${root}/workflows/samples/images`).filter((f) => /\.(jpe?g|png)$/i.test(f));
  assert.ok(samples.length >= 2, `${samples}`);
  for (const file of samples) {
    const photo = new Uint8Array(readFileSync(`${root}/workflows/samples/images/${file}`));
    const proof = component.run(photo);
    assert.deepEqual(proof, pkg.runSync([photo]), file);
    assert.equal(typeof proof.width, 'number');
  }
});

test('a failing run gives a typed error with the npm package message', async () => {
  const component = await load('photo_proof');
  const pkg = require(`${packages}/photo_proof/pkg/node/wf_photo_proof.js`);
  const notAnImage = new Uint8Array([1, 2, 3]);
  const expected = (() => {
    try {
      pkg.runSync([notAnImage]);
    } catch (e) {
      return e.message;
    }
  })();
  assert.throws(() => component.run(notAnImage), (e) => {
    assert.deepEqual({ ...e }, { kind: 'invalid-input', message: expected });
    return true;
  });
});

test('the service builds the component and http targets (the same bytes as the CLI) and runs the component: POST .../run', async () => {
  const KEY = 'component-key';
  const { child, url } = await spawnServer({ dataDir: mkdtempSync(join(tmpdir(), 'braid-component-')), key: KEY });
  const post = (path, body, headers = {}) => fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, ...headers }, body });
  const json = { 'content-type': 'application/json' };
  try {
    const submit = async (name) => {
      const manifest = JSON.parse(readFileSync(`${root}/workflows/${name}.json`, 'utf8'));
      const res = await post('/v1/workflows', JSON.stringify({ manifest, targets: ['component', 'http'] }), json);
      const submitted = await res.json();
      assert.equal(res.status, 202, JSON.stringify(submitted));
      const job = await waitJob(url, submitted.job_id, { key: KEY });
      assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
      return submitted;
    };
    const salted = await submit('salted_cid');
    const build = await (await fetch(`${url}/v1/builds/${salted.build_id}`)).json();
    const bytes = async (name) => {
      const artifact = build.artifacts.find((a) => a.name === name);
      assert.ok(artifact, `${name} in ${build.artifacts.map((a) => a.name)}`);
      return new Uint8Array(await (await fetch(`${url}/v1/artifacts/${artifact.cid}`)).arrayBuffer());
    };
    const local = `${components}/salted_cid/component`;
    assert.deepEqual(await bytes('wf_salted_cid.component.wasm'), new Uint8Array(readFileSync(`${local}/wf_salted_cid.wasm`)));
    assert.equal(new TextDecoder().decode(await bytes('world.wit')), readFileSync(`${local}/world.wit`, 'utf8'));
    // The HTTP function too (`--targets http`), the CLI's bytes.
    const http = readFileSync(`${components}/salted_cid/http/wf_salted_cid.wasm`);
    assert.deepEqual(await bytes('wf_salted_cid.http.wasm'), new Uint8Array(http));

    // Run it: by name or in order, by workflow or by build; the same CID as the npm package.
    const pkg = require(`${packages}/salted_cid/pkg/node/wf_salted_cid.js`);
    const expected = pkg.runSync(['salt', new TextEncoder().encode('hello')]);
    const hello = Buffer.from('hello').toString('base64');
    for (const [path, body] of [
      [`/v1/workflows/${salted.workflow_id}/run`, { text: 'salt', bytes: hello }],
      [`/v1/workflows/${salted.workflow_id}/run`, ['salt', hello]],
      [`/v1/builds/${salted.build_id}/run`, { bytes: hello, text: 'salt' }],
    ]) {
      const res = await post(path, JSON.stringify(body), json);
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.equal(JSON.parse(text), expected, path);
      assert.match(res.headers.get('server-timing'), /^inst;dur=\d+\.\d{3}, run;dur=\d+\.\d{3}$/);
    }
    // multipart/form-data by name: a String input's text, a Bytes input's raw bytes.
    const form = new FormData();
    form.append('bytes', new Blob(['hello']));
    form.append('text', 'salt');
    const multipart = await fetch(`${url}/v1/workflows/${salted.workflow_id}/run`, { method: 'POST', headers: { 'x-api-key': KEY }, body: form });
    assert.equal(multipart.status, 200);
    assert.equal(await multipart.json(), expected, 'multipart');
    // Keys, and what the caller sent wrong.
    const run = `/v1/workflows/${salted.workflow_id}/run`;
    assert.equal((await fetch(`${url}${run}`, { method: 'POST', headers: json, body: '[]' })).status, 401);
    for (const [body, headers, status, detail] of SALTED_PROBLEMS) {
      const res = await post(run, body, headers);
      const problem = await res.json();
      assert.equal(res.status, status, JSON.stringify(problem));
      assert.match(problem.detail, detail);
    }
    const unknown = 'bafkr4if2pgumvmgqgkdqogi5cdpv7aconymcnor276rrmf7stv26g4h47u';
    const missing = await post(`/v1/workflows/${unknown}/run`, '[]', json);
    assert.equal(missing.status, 404);

    // One Bytes input: the raw body; a workflow failure is a 422 with the package's message.
    const proof = await submit('photo_proof');
    const photo = readFileSync(`${root}/workflows/samples/images/photo.jpg`);
    const answer = await post(`/v1/workflows/${proof.workflow_id}/run`, photo, { 'content-type': 'image/jpeg' });
    const text = await answer.text();
    assert.equal(answer.status, 200, text);
    const proofPkg = require(`${packages}/photo_proof/pkg/node/wf_photo_proof.js`);
    assert.deepEqual(JSON.parse(text), proofPkg.runSync([new Uint8Array(photo)]));
    const failed = await post(`/v1/workflows/${proof.workflow_id}/run`, 'not a photo');
    const failure = await failed.json();
    assert.equal(failed.status, 422, JSON.stringify(failure));
    assert.match(failure.detail, /^the workflow failed \(invalid-input\): op_image_decode: invalid input: not a PNG or JPEG/);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.match(metrics, /braid_runs_total\{outcome="ok"\} [4-9]/);
    assert.match(metrics, /braid_runs_total\{outcome="failed"\} 1/);
  } finally {
    killHard(child);
  }
});

test('a workflow built without the component target has nothing to run: 404 with the way to build one', async () => {
  const KEY = 'component-key';
  const { child, url } = await spawnServer({ dataDir: mkdtempSync(join(tmpdir(), 'braid-component-')), key: KEY, args: ['--public-run'] });
  try {
    const manifest = JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8'));
    const res = await fetch(`${url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ manifest, targets: ['native'] }),
    });
    const submitted = await res.json();
    assert.equal((await waitJob(url, submitted.job_id, { key: KEY })).state, 'succeeded');
    // --public-run: no key needed, and still nothing to run.
    const run = await fetch(`${url}/v1/workflows/${submitted.workflow_id}/run`, { method: 'POST', body: 'hello' });
    const problem = await run.json();
    assert.equal(run.status, 404, JSON.stringify(problem));
    assert.match(problem.detail, /has no component to run: submit the workflow with "targets": \["component"\]/);
  } finally {
    killHard(child);
  }
});
