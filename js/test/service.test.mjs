// The publish service end to end: a real `braid serve` on a loopback port.
// Publishes each example workflow, polls its job, downloads the npm tarball,
// installs it with npm in a temp dir and runs it; dedup, auth, bad input,
// kill -9 during a build and restart, and 50 parallel submissions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputValue } from '../lib/reference.mjs';
import { contentId as cidOf } from '../lib/cid.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const braid = process.env.BRAID_BIN ?? `${root}/target/debug/braid`;
const KEY = 'test-key-1';
const data = mkdtempSync(join(tmpdir(), 'braid-serve-'));
const vectors = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8')).cases;
const manifest = (name) => JSON.parse(readFileSync(`${root}/workflows/${name}.json`, 'utf8'));

let server;
let base;

/** Starts `braid serve` on a free port; resolves once it listens. */
function start() {
  return new Promise((resolve, reject) => {
    const child = spawn(braid, ['serve', '--addr', '127.0.0.1:0', '--data', data, '--api-key', KEY, '--workers', '1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true, // its own process group, so kill -9 takes its builds too
    });
    let seen = '';
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      const m = seen.match(/listening on (http:\/\/[0-9.:]+)\n/);
      if (m && !base) {
        base = m[1];
        resolve(child);
      }
    });
    child.on('exit', (code) => reject(new Error(`braid serve exited (${code}):\n${seen}`)));
  });
}

function killHard(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

before(async () => {
  server = await start();
});
after(() => killHard(server));

const api = (path, init = {}) => fetch(`${base}${path}`, init);
const post = (path, body, headers = {}) =>
  api(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function waitJob(jobId, { until = ['succeeded', 'failed'], timeoutMs = 600_000 } = {}) {
  const start = Date.now();
  for (;;) {
    const job = await (await api(`/v1/jobs/${jobId}`)).json();
    if (until.includes(job.state)) return job;
    if (Date.now() - start > timeoutMs) throw new Error(`job ${jobId} still ${job.state}: ${job.progress}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function publish(body) {
  const res = await post('/v1/workflows', body);
  const answer = await res.json();
  if (res.status === 202) {
    const job = await waitJob(answer.job_id);
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  } else {
    assert.equal(res.status, 200, JSON.stringify(answer));
  }
  return (await api(`/v1/workflows/${answer.workflow_id}`)).json();
}

async function download(artifact) {
  const res = await api(`/v1/artifacts/${artifact.cid}`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('etag'), `"${artifact.cid}"`);
  assert.equal(res.headers.get('content-type'), artifact.media_type);
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(bytes.length, artifact.size);
  assert.equal(cidOf(bytes), artifact.cid, 'the bytes hash to their content id');
  return bytes;
}

test('health, OpenAPI and operations', async () => {
  assert.deepEqual(await (await api('/healthz')).json(), { status: 'ok' });
  const doc = await (await api('/v1/openapi.json')).json();
  for (const p of ['/v1/operations', '/v1/validate', '/v1/generate', '/v1/workflows', '/v1/jobs/{id}', '/v1/workflows/{id}', '/v1/artifacts/{cid}']) {
    assert.ok(doc.paths[p], `OpenAPI documents ${p}`);
  }
  const ops = await (await api('/v1/operations')).json();
  assert.ok(ops.find((o) => o.name === 'op_multihash' && o.version_id.startsWith('bafkr4i')));
  const one = await (await api('/v1/operations/op_cid')).json();
  assert.equal(one.versions[0].manifest.output, 'Cid');
});

test('validate and generate', async () => {
  const ok = await post('/v1/validate', manifest('salted_cid'), {});
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).valid, true);
  const bad = await post('/v1/validate', { name: 'x', version: '1', segments: [] });
  assert.equal(bad.status, 422);
  assert.equal(bad.headers.get('content-type'), 'application/problem+json');
  const problem = await bad.json();
  assert.deepEqual(problem.diagnostics.map((d) => d.pointer).sort(), ['/segments', '/version']);
  const gen = await post('/v1/generate', manifest('cidv1_from_bytes'));
  assert.equal(gen.status, 200);
  assert.equal(gen.headers.get('content-type'), 'application/gzip');
  const dir = mkdtempSync(join(tmpdir(), 'braid-gen-'));
  writeFileSync(join(dir, 'crate.tar.gz'), new Uint8Array(await gen.arrayBuffer()));
  const list = spawnSync('tar', ['tzf', 'crate.tar.gz'], { cwd: dir, encoding: 'utf8' }).stdout;
  for (const f of ['wf_cidv1_from_bytes/Cargo.toml', 'wf_cidv1_from_bytes/Cargo.lock', 'wf_cidv1_from_bytes/src/lib.rs', 'wf_cidv1_from_bytes/vendor/op_cid/src/lib.rs']) {
    assert.ok(list.includes(f), `${f} in\n${list}`);
  }
});

test('writes need a valid key; reads do not', async () => {
  const body = JSON.stringify({ manifest: manifest('cidv1_from_bytes') });
  const none = await api('/v1/workflows', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(none.status, 401);
  assert.match((await none.json()).detail, /x-api-key/);
  const wrong = await post('/v1/workflows', body, { 'x-api-key': 'nope' });
  assert.equal(wrong.status, 403);
  assert.equal((await api('/v1/operations')).status, 200);
});

test('each example workflow: publish, poll, download, npm install, run in Node', async () => {
  for (const name of ['cidv1_from_bytes', 'dual_cid_of_text', 'salted_cid', 'cid_of_file']) {
    const wf = await publish({ manifest: manifest(name) });
    assert.equal(wf.state, 'succeeded');
    const names = wf.artifacts.map((a) => a.name).sort();
    if (name === 'cid_of_file') {
      assert.deepEqual(names, ['crate.tar.gz'], 'native only: no npm packages');
      await download(wf.artifacts[0]);
      continue;
    }
    assert.deepEqual(names, ['crate.tar.gz', 'pkg-bundler.tgz', 'pkg-node.tgz', 'pkg-web.tgz', `wf_${name}.wasm`]);
    assert.ok(wf.sizes_bytes['node.wasm'] > 0 && wf.timings_ms.generate >= 0);
    for (const a of wf.artifacts) await download(a);
    const tgz = await download(wf.artifacts.find((a) => a.name === 'pkg-node.tgz'));
    const dir = mkdtempSync(join(tmpdir(), 'braid-npm-'));
    writeFileSync(join(dir, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}');
    writeFileSync(join(dir, 'pkg.tgz'), tgz);
    const npm = spawnSync('npm', ['install', './pkg.tgz', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, encoding: 'utf8' });
    assert.equal(npm.status, 0, npm.stderr);
    const c = vectors.find((v) => v.workflow === name);
    const inputs = c.calls.flat().map((s) => inputValue(s, root));
    writeFileSync(join(dir, 'inputs.json'), JSON.stringify(inputs.map((v) => (typeof v === 'string' ? { s: v } : { b: [...v] }))));
    const script = `const wf = require('wf_${name}');
      const inputs = require('./inputs.json').map((v) => ('s' in v ? v.s : new Uint8Array(v.b)));
      wf.run(inputs).then((o) => console.log(JSON.stringify(o)));`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), c.output, name);
  }
});

test('the same manifest again is answered from the earlier build', async () => {
  const first = await publish({ manifest: manifest('cidv1_from_bytes') });
  // Key order and whitespace do not matter: the manifest is canonicalized.
  const reordered = Object.fromEntries(Object.entries(manifest('cidv1_from_bytes')).reverse());
  const res = await post('/v1/workflows', `{ "manifest": ${JSON.stringify(reordered, null, 4)} }`);
  assert.equal(res.status, 200);
  const answer = await res.json();
  assert.equal(answer.workflow_id, first.id);
  assert.equal(answer.state, 'succeeded');
  assert.deepEqual(answer.artifacts, first.artifacts);
  // Other targets are another build.
  const native = await post('/v1/workflows', { manifest: manifest('cidv1_from_bytes'), targets: ['native'] });
  assert.notEqual((await native.json()).workflow_id, first.id);
});

test('bad input gets a 4xx problem document, never a 5xx', async () => {
  const big = JSON.stringify({ manifest: { name: 'x', description: 'y'.repeat(3 << 20) } });
  const cases = [
    [() => post('/v1/validate', 'not json'), 400],
    [() => post('/v1/validate', '{"a":'), 400],
    [() => post('/v1/validate', manifest('salted_cid'), { 'content-type': 'text/plain' }), 415],
    [() => api('/v1/validate', { method: 'POST', body: '{}' }), 415],
    [() => post('/v1/validate', big), 413],
    [() => post('/v1/workflows', big), 413],
    [() => post('/v1/workflows', { manifest: manifest('salted_cid'), extra: 1 }), 400],
    [() => post('/v1/workflows', { manifest: manifest('salted_cid'), targets: ['riscv'] }), 422],
    [() => post('/v1/workflows', { manifest: manifest('cid_of_file'), targets: ['node'] }), 422],
    [() => post('/v1/workflows', { manifest: { name: 'x', version: '0.1.0', segments: [{ inputs: [5], sequence: [] }] } }), 422],
    [() => post('/v1/workflows', '[]'), 400],
    [() => post('/v1/generate', { name: '1bad' }), 422],
    [() => post('/v1/validate', { name: 'a', version: '0.1.0', segments: [{ inputs: [-1], sequence: [{ operation: 'op_cid', config: { base: 'x' } }] }] }), 422],
    [() => api('/v1/jobs/0123456789abcdef0123456789abcdef'), 404],
    [() => api('/v1/jobs/not-a-job'), 400],
    [() => api('/v1/jobs/..%2F..%2Fetc%2Fpasswd'), 400],
    [() => api('/v1/workflows/bafkr4iaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 404],
    [() => api('/v1/workflows/..%2f..%2fbraid.sqlite'), 400],
    [() => api('/v1/artifacts/..%2F..%2Fbraid.sqlite'), 400],
    // fetch resolves %2e%2e as `..` (WHATWG URL), so this asks for /v1/.
    [() => api('/v1/artifacts/%2e%2e'), 404],
    [() => api('/v1/artifacts/%252e%252e%252fbraid.sqlite'), 400],
    [() => api('/v1/artifacts/bafkr4iaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 404],
    [() => api('/v1/operations/..%2Fop_cid'), 404],
    [() => api('/v1/nope'), 404],
    [() => api('/v1/operations', { method: 'DELETE' }), 405],
  ];
  for (const [call, status] of cases) {
    const res = await call();
    const body = await res.text();
    assert.equal(res.status, status, `${call}: ${body}`);
    assert.equal(res.headers.get('content-type'), 'application/problem+json', `${call}`);
    const problem = JSON.parse(body);
    assert.equal(problem.status, status);
    assert.ok(problem.detail.length > 10, problem.detail);
  }
  assert.equal((await api('/healthz')).status, 200, 'still serving');
});

test('every kind of invalid manifest is a 422 with diagnostics, from validate and from workflows', async () => {
  const seg = (inputs, ops) => ({ inputs, sequence: ops.map((operation) => (typeof operation === 'string' ? { operation } : operation)) });
  const cid = seg([-1], ['op_multihash', 'op_cid']);
  const m = (segments, extra = {}) => ({ name: 'bad', version: '0.1.0', segments, ...extra });
  const invalid = [
    [m([cid], { name: '1abc' }), '/name'],
    [m([cid], { name: 'nul\u0000' }), '/name'],
    [m([cid], { name: 'self"; drop' }), '/name'],
    [m([cid], { version: '1' }), '/version'],
    [m([cid], { description: 'a\u0000b' }), '/description'],
    [m([seg([1], ['op_utf8']), cid]), '/segments/0/inputs/0'],
    [m([seg([-5], ['op_utf8'])]), '/segments/0/inputs/0'],
    [m([seg([1e30], ['op_utf8'])]), '/segments/0/inputs/0'],
    [m([seg([-1, -1], ['op_multihash'])]), '/segments/0/inputs'],
    [m([seg([-1], ['op_cid', 'op_multihash'])]), '/segments/0/sequence/1'],
    [m([seg([-1], ['op_nope'])]), '/segments/0/sequence/0/operation'],
    [m([seg([-1], [{ operation: 'op_cid', version: '^9' }])]), '/segments/0/sequence/0/version'],
    [m([seg([-1], [{ operation: 'op_cid', config: { base: 'base2' } }])]), '/segments/0/sequence/0/config/base'],
    [m([seg([-1], [{ operation: 'op_cid', config: { nope: 'x' } }])]), '/segments/0/sequence/0/config/nope'],
    [m([cid, cid]), '/segments/0'],
    [m([]), '/segments'],
    [m(Array.from({ length: 129 }, (_, i) => (i === 0 ? seg([-1], ['op_utf8']) : seg([i - 1], ['op_concat'])))), '/segments'],
    [{ ...m([cid]), surprise: true }, '/surprise'],
  ];
  for (const [manifest, pointer] of invalid) {
    for (const [path, body] of [['/v1/validate', manifest], ['/v1/workflows', { manifest }]]) {
      const res = await post(path, body);
      const problem = await res.json();
      assert.equal(res.status, 422, `${path} ${pointer}: ${JSON.stringify(problem)}`);
      assert.ok(problem.diagnostics.some((d) => d.pointer === pointer), `${pointer} in ${JSON.stringify(problem.diagnostics)}`);
    }
  }
});

test('a build over its time limit is stopped and fails, with no artifacts', async () => {
  const data2 = mkdtempSync(join(tmpdir(), 'braid-timeout-'));
  const child = spawn(braid, ['serve', '--addr', '127.0.0.1:0', '--data', data2, '--api-key', KEY, '--build-timeout', '1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  try {
    const url = await new Promise((resolve, reject) => {
      let seen = '';
      child.stderr.on('data', (c) => {
        seen += c;
        const m = seen.match(/listening on (http:\/\/[0-9.:]+)\n/);
        if (m) resolve(m[1]);
      });
      child.on('exit', () => reject(new Error(seen)));
    });
    const body = { manifest: { ...manifest('cidv1_from_bytes'), name: `slow_${Date.now()}` }, targets: ['native', 'node'] };
    const res = await fetch(`${url}/v1/workflows`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
    const { job_id, workflow_id } = await res.json();
    let job;
    for (;;) {
      job = await (await fetch(`${url}/v1/jobs/${job_id}`)).json();
      if (job.state === 'failed' || job.state === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(job.state, 'failed');
    assert.match(job.error, /took longer than 1 s and was stopped/);
    const wf = await (await fetch(`${url}/v1/workflows/${workflow_id}`)).json();
    assert.equal(wf.state, 'failed');
    assert.deepEqual(wf.artifacts, []);
  } finally {
    killHard(child);
  }
});

test('50 parallel submissions of 5 distinct manifests make exactly 5 builds, all succeed', async () => {
  const hashers = ['blake3', 'sha2-256', 'sha2-512', 'sha3-256', 'keccak-256'];
  const manifests = hashers.map((hasher) => ({
    name: `par_${hasher.replace(/-/g, '_')}`,
    version: '0.1.0',
    segments: [{ inputs: [-1], sequence: [{ operation: 'op_multihash', config: { hasher } }, { operation: 'op_cid' }] }],
  }));
  const metric = async (name) => Number((await (await api('/metrics')).text()).match(new RegExp(`^${name} (\\d+)`, 'm'))[1]);
  const started = await metric('braid_builds_started_total');
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => post('/v1/workflows', { manifest: manifests[i % 5], targets: ['native'] }).then((r) => r.json())),
  );
  const jobs = new Set(answers.map((a) => a.job_id));
  assert.equal(jobs.size, 5, 'one job per distinct manifest');
  assert.equal(new Set(answers.map((a) => a.workflow_id)).size, 5);
  for (const id of jobs) assert.equal((await waitJob(id)).state, 'succeeded');
  assert.equal((await metric('braid_builds_started_total')) - started, 5, 'exactly 5 builds ran');
  assert.ok((await metric('braid_joined_builds_total')) >= 45);
});

test('kill -9 during a build, restart: the job runs again and only whole artifacts are served', async () => {
  const m = { ...manifest('dual_cid_of_text'), name: 'restarted' };
  const res = await post('/v1/workflows', { manifest: m, targets: ['native', 'node'] });
  assert.equal(res.status, 202);
  const { job_id, workflow_id } = await res.json();
  await waitJob(job_id, { until: ['running'] });
  // Let the build get under way, then kill the server and its builds.
  await new Promise((r) => setTimeout(r, 1500));
  killHard(server);
  await new Promise((r) => setTimeout(r, 300));
  base = undefined;
  server = await start();
  const job = await waitJob(job_id);
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const wf = await (await api(`/v1/workflows/${workflow_id}`)).json();
  assert.equal(wf.state, 'succeeded');
  for (const a of wf.artifacts) await download(a);
  // Earlier builds are still there after the restart.
  const again = await post('/v1/workflows', { manifest: manifest('cidv1_from_bytes') });
  assert.equal(again.status, 200);
});

test('metrics are Prometheus text', async () => {
  const text = await (await api('/metrics')).text();
  for (const m of ['braid_http_requests_total{method="GET",status="200"}', 'braid_jobs{state="succeeded"}', 'braid_build_duration_seconds_count', 'braid_cache_hits_total']) {
    assert.ok(text.includes(m), m);
  }
});
