// A deployment on one machine, loopback only: a private PostgreSQL
// (scripts/postgres.sh), two `braid serve --workers 0` (the API) and three
// `braid worker`s, all sharing the database and one artifact directory.
// Submissions through both APIs, a worker killed mid-build, everything
// restarted, a damaged artifact. `make test-cluster`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { braid, killHard, waitJob } from '../lib/server.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const KEY = 'cluster-key';
const dir = mkdtempSync(join(tmpdir(), 'braid-cluster-'));
// PostgreSQL runs as its own user (scripts/postgres.sh): it must reach its directory.
chmodSync(dir, 0o755);
const artifacts = join(dir, 'artifacts');
const pgDir = join(dir, 'postgres');
const pg = (...args) => execFileSync(`${root}/scripts/postgres.sh`, args, { encoding: 'utf8' }).trim();
let database;
let pgPort;
let apis = [];
let workers = [];

/** A free loopback port. */
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Starts `braid <role> ...` in its own process group; resolves once `ready` shows in its log. */
function start(role, name, args, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(braid, [role, '--data', join(dir, name), '--database', database, '--artifacts', artifacts, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      env: { ...process.env, RUST_LOG: 'info', NO_COLOR: '1' },
    });
    let log = '';
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = log.match(ready);
      if (m) resolve({ name, child, url: m[1], log: () => log });
    });
    child.on('exit', (code) => reject(new Error(`braid ${role} ${name} exited (${code}):\n${log}`)));
  });
}

const startApi = (name) =>
  start('serve', name, ['--addr', '127.0.0.1:0', '--api-key', KEY, '--workers', '0'], /listening on (http:\/\/[0-9.:]+)\n/);
const startWorker = (name) => start('worker', name, ['--workers', '1', '--lease', '3'], /braid worker: (ready)/);

async function startAll() {
  database = pg('start', pgDir, String(pgPort));
  apis = await Promise.all(['api1', 'api2'].map(startApi));
  workers = await Promise.all(['w1', 'w2', 'w3'].map(startWorker));
}

function stopAll() {
  for (const p of [...apis, ...workers]) killHard(p.child);
  apis = [];
  workers = [];
}

before(async () => {
  pgPort = await freePort();
  await startAll();
});

after(() => {
  stopAll();
  try {
    pg('stop', pgDir);
  } catch {}
  rmSync(dir, { recursive: true, force: true });
});

const manifest = (name) => ({ ...JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8')), name });
const submit = (api, m, targets = ['native']) =>
  fetch(`${api.url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ manifest: m, targets }),
  });
const get = (api, path) => fetch(`${api.url}${path}`);
const built = new Map(); // build id -> { name, artifacts }

test('20 submissions through two APIs: each distinct workflow is built once, by one job, and served by both', async () => {
  const names = ['cluster_a', 'cluster_b', 'cluster_c', 'cluster_d'];
  const answers = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const res = await submit(apis[i % 2], manifest(names[i % names.length]));
      assert.ok([200, 202].includes(res.status), await res.clone().text());
      return res.json();
    }),
  );
  const jobsOf = new Map();
  for (const a of answers) {
    if (!jobsOf.has(a.build_id)) jobsOf.set(a.build_id, new Set());
    if (a.job_id) jobsOf.get(a.build_id).add(a.job_id);
  }
  assert.equal(jobsOf.size, names.length);
  for (const [build, jobs] of jobsOf) assert.equal(jobs.size, 1, `build ${build} got jobs ${[...jobs]}`);
  for (const [build, jobs] of jobsOf) {
    const job = await waitJob(apis[0].url, [...jobs][0], { timeoutMs: 900_000 });
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
    const row = await (await get(apis[1], `/v1/builds/${build}`)).json();
    assert.equal(row.state, 'succeeded');
    built.set(build, { name: names[answers.findIndex((a) => a.build_id === build) % names.length], artifacts: row.artifacts });
    for (const a of row.artifacts) {
      const [one, two] = await Promise.all(apis.map(async (api) => Buffer.from(await (await get(api, `/v1/artifacts/${a.cid}`)).arrayBuffer())));
      assert.ok(one.length > 0 && one.equals(two), `${a.name} differs between the APIs`);
    }
  }
  // Every build ran on a worker, none in the API processes.
  const started = workers.map((w) => (w.log().match(/build started/g) ?? []).length);
  assert.equal(started.reduce((x, y) => x + y, 0), names.length, `builds started per worker: ${started}`);
});

test('kill -9 of the worker running a build: its lease runs out and another worker finishes the job', async () => {
  // Three targets: long enough (seconds, warm) to be killed mid-way.
  const res = await submit(apis[0], manifest('cluster_killed'), ['native', 'node', 'web']);
  assert.equal(res.status, 202);
  const { job_id, build_id } = await res.json();
  await waitJob(apis[0].url, job_id, { until: ['running'] });
  let runner;
  for (let i = 0; i < 100 && !runner; i++) {
    runner = workers.find((w) => w.log().includes(job_id));
    if (!runner) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(runner, 'no worker logged the job');
  killHard(runner.child);
  const then = await (await get(apis[0], `/v1/jobs/${job_id}`)).json();
  assert.equal(then.state, 'running', 'the build ended before its worker was killed');
  workers = workers.filter((w) => w !== runner);
  const job = await waitJob(apis[1].url, job_id, { timeoutMs: 900_000 });
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const taker = workers.find((w) => new RegExp(`build started.*job=${job_id} attempt=2`).test(w.log()));
  assert.ok(taker, `no other worker took the job over:\n${workers.map((w) => w.log()).join('\n')}`);
  const row = await (await get(apis[1], `/v1/builds/${build_id}`)).json();
  built.set(build_id, { name: 'cluster_killed', targets: ['native', 'node', 'web'], artifacts: row.artifacts });
  const metrics = await (await get(apis[0], '/metrics')).text();
  assert.match(metrics, /^braid_jobs\{state="running"\} 0$/m, 'a job is stuck in running');
  workers.push(await startWorker('w4'));
});

test('everything killed and restarted, PostgreSQL included: every build, job and artifact is still there', async () => {
  stopAll();
  pg('kill', pgDir);
  await startAll();
  assert.ok(built.size >= 5);
  for (const [build, { name, targets, artifacts: list }] of built) {
    const row = await (await get(apis[1], `/v1/builds/${build}`)).json();
    assert.equal(row.state, 'succeeded');
    assert.deepEqual(row.artifacts, list);
    for (const a of list) assert.equal((await get(apis[0], `/v1/artifacts/${a.cid}`)).status, 200, a.name);
    const again = await submit(apis[1], manifest(name), targets);
    assert.equal(again.status, 200, `${name} is built already`);
  }
});

test('a damaged artifact in the shared store is refused by every API, never served', async () => {
  const [, { artifacts: list }] = [...built][0];
  const a = list.find((x) => x.name === 'crate.tar.gz');
  assert.ok(readdirSync(artifacts).includes(a.cid));
  writeFileSync(join(artifacts, a.cid), 'damaged');
  for (const api of apis) {
    const res = await get(api, `/v1/artifacts/${a.cid}`);
    assert.notEqual(res.status, 200, 'a damaged artifact was served');
    assert.notEqual(await res.text(), 'damaged');
  }
});
