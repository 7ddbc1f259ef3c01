// A deployment on one machine, loopback only: a private PostgreSQL
// (scripts/postgres.sh), a three-node Garage with replication 3
// (scripts/garage.sh), two `braid serve --workers 0` (the API) and three
// `braid worker`s, all sharing the database and the S3 store. Submissions
// through both APIs, an operation published through one and used through
// the other, a component built by a worker run through both, a deployment
// moved back and forth through both while both run it, a worker, a
// Garage node and an API (mid-run, mid-upload) killed, everything
// restarted, a damaged object. Every artifact downloaded is checked against
// its CID here too. `make test-cluster`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Deployment, garage, pg } from '../lib/cluster.mjs';
import { root } from '../lib/paths.mjs';
import { braid, waitJob } from '../lib/server.mjs';
import { exited, until } from '../lib/wait.mjs';
import { cid } from '../lib/reference.mjs';

const KEY = 'cluster-key';
const PUBLISHER = 'cluster-publisher';
const d = new Deployment();
let apis = [];
let workers = [];

// Runs get 30 s: a debug build copies a large input value by value.
const startApi = (name) => d.api(name, KEY, [...d.shared(), '--workers', '0', '--publisher-key', PUBLISHER, '--time-limit', '30000']);
const startWorker = (name) => d.worker(name, ['--workers', '1', '--lease', '5', '--compile-cache']);

async function startAll() {
  await d.backends();
  apis = await Promise.all(['api1', 'api2'].map(startApi));
  workers = await Promise.all(['w1', 'w2', 'w3'].map(startWorker));
}

function stopAll() {
  d.kill();
  apis = [];
  workers = [];
}

before(startAll);
after(() => d.close());

const manifest = (name) => ({ ...JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8')), name });
const submit = (api, m, targets = ['native']) =>
  fetch(`${api.url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ manifest: m, targets }),
  });
const get = (api, path) => fetch(`${api.url}${path}`, { headers: { 'x-api-key': KEY } });
/** An artifact from `api`: 200, and bytes that hash to its CID. */
async function download(api, c) {
  const res = await get(api, `/v1/artifacts/${c}`);
  assert.equal(res.status, 200, `${api.name}: ${c}: ${await res.clone().text()}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(cid(bytes), c, `${api.name} served bytes that are not ${c}`);
  return Buffer.from(bytes);
}
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
    const job = await waitJob(apis[0].url, [...jobs][0], { key: KEY, timeoutMs: 900_000 });
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
    const row = await (await get(apis[1], `/v1/builds/${build}`)).json();
    assert.equal(row.state, 'succeeded');
    built.set(build, { name: names[answers.findIndex((a) => a.build_id === build) % names.length], artifacts: row.artifacts });
    for (const a of row.artifacts) {
      const [one, two] = await Promise.all(apis.map((api) => download(api, a.cid)));
      assert.ok(one.length > 0 && one.equals(two), `${a.name} differs between the APIs`);
    }
  }
  // The workers compiled through the compile cache in the bucket.
  const listing = await (await d.bucket(2)('?list-type=2&prefix=sccache/')).text();
  assert.match(listing, /<Key>sccache\//, `nothing under sccache/ in the bucket:\n${listing}`);
  // Every build ran on a worker, none in the API processes.
  const started = workers.map((w) => (w.log().match(/build started/g) ?? []).length);
  assert.equal(started.reduce((x, y) => x + y, 0), names.length, `builds started per worker: ${started}`);
});

// The operation published below: its name, version id and the workflow using it.
const published = { name: 'op_cluster', manifest: null, versionId: null };

test('an operation published through one API is checked by a worker, listed by both, and used through the other', async () => {
  // Not spawnSync: the processes' logs must keep flowing meanwhile.
  const run = (...args) => promisify(execFile)(braid, args, { encoding: 'utf8' });
  const dir = join(d.dir, published.name);
  await run('new', 'op', published.name, '-o', dir);
  const lib = join(dir, 'src/lib.rs');
  const text = readFileSync(lib, 'utf8').replace('Ok(input.iter().rev().copied().collect())', 'Ok(input.to_ascii_uppercase().into())');
  writeFileSync(lib, text.replace(/#\[cfg\(test\)\][\s\S]*$/, ''));
  const { stdout } = await run('ops', 'publish', dir, '--server', apis[0].url, '--key', PUBLISHER);
  const [name, version, versionId] = stdout.trim().split(/\s+/);
  assert.deepEqual([name, version], [published.name, '0.1.0']);
  published.versionId = versionId;
  // Checked by a worker (the APIs run no builds), its upload kept in the bucket.
  const checker = workers.find((w) => w.log().includes(`checking ${published.name} 0.1.0`));
  assert.ok(checker, `no worker logged the check:\n${workers.map((w) => w.log()).join('\n')}`);
  for (const api of apis) {
    const listed = await (await get(api, `/v1/operations/${published.name}`)).json();
    assert.deepEqual(listed.versions?.map((v) => v.version_id), [versionId], `${api.name}: ${JSON.stringify(listed)}`);
  }
  published.manifest = {
    name: 'cluster_published', version: '0.1.0', description: 'uses an operation published to the deployment', groups: [],
    segments: [{ inputs: [-1], sequence: [{ operation: published.name, version: '^0.1' }] }],
  };
  const res = await submit(apis[1], published.manifest);
  assert.equal(res.status, 202, await res.clone().text());
  const { job_id, build_id } = await res.json();
  const job = await waitJob(apis[1].url, job_id, { key: KEY, timeoutMs: 900_000 });
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const row = await (await get(apis[0], `/v1/builds/${build_id}`)).json();
  for (const a of row.artifacts) await download(apis[0], a.cid);
  built.set(build_id, { name: 'cluster_published', manifest: published.manifest, artifacts: row.artifacts });
});

test('SIGTERM at any point of a worker\'s start-up stops it gracefully (exit 0)', async () => {
  for (const [when, ready] of [['before it takes jobs', /braid worker: (starting)\n/], ['once it is ready', /braid worker: (ready)/]]) {
    const w = await d.start('worker', 'w-sigterm', [...d.shared(), '--workers', '1'], ready);
    process.kill(w.child.pid, 'SIGTERM');
    assert.deepEqual(await exited(w.child), { code: 0, signal: null }, `SIGTERM ${when}:\n${w.log()}`);
    assert.match(w.log(), /braid worker: stopped/, when);
    d.processes = d.processes.filter((p) => p !== w);
  }
});

test('kill -9 of the worker running a build: its lease runs out and another worker finishes the job', async () => {
  // Three targets: long enough (seconds, warm) to be killed mid-way.
  const res = await submit(apis[0], manifest('cluster_killed'), ['native', 'node', 'web']);
  assert.equal(res.status, 202);
  const { job_id, build_id } = await res.json();
  await waitJob(apis[0].url, job_id, { key: KEY, until: ['running'] });
  const runner = await until(() => workers.find((w) => w.log().includes(job_id)), 'no worker logged the job');
  d.kill(runner);
  const then = await (await get(apis[0], `/v1/jobs/${job_id}`)).json();
  assert.equal(then.state, 'running', 'the build ended before its worker was killed');
  workers = workers.filter((w) => w !== runner);
  const job = await waitJob(apis[1].url, job_id, { key: KEY, timeoutMs: 900_000 });
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const taker = workers.find((w) => new RegExp(`build started.*job=${job_id} attempt=2`).test(w.log()));
  assert.ok(taker, `no other worker took the job over:\n${workers.map((w) => w.log()).join('\n')}`);
  const row = await (await get(apis[1], `/v1/builds/${build_id}`)).json();
  built.set(build_id, { name: 'cluster_killed', targets: ['native', 'node', 'web'], artifacts: row.artifacts });
  const metrics = await (await get(apis[0], '/metrics')).text();
  assert.match(metrics, /^braid_jobs\{state="running"\} 0$/m, 'a job is stuck in running');
  workers.push(await startWorker('w4'));
});

test('kill -9 of a Garage node: artifacts are still served and built; after it rejoins, it serves every one', async () => {
  // Node 1: the first endpoint of every process.
  garage('kill', d.garageDir, '1');
  for (const { artifacts: list } of built.values()) {
    for (const a of list) for (const api of apis) await download(api, a.cid);
  }
  const res = await submit(apis[1], manifest('cluster_degraded'), ['native', 'node']);
  assert.equal(res.status, 202);
  const { job_id, build_id } = await res.json();
  const job = await waitJob(apis[1].url, job_id, { key: KEY, timeoutMs: 900_000 });
  assert.equal(job.state, 'succeeded', `built with a Garage node down: ${job.error}\n${job.log_tail}`);
  const row = await (await get(apis[0], `/v1/builds/${build_id}`)).json();
  built.set(build_id, { name: 'cluster_degraded', targets: ['native', 'node'], artifacts: row.artifacts });
  garage('start', d.garageDir, String(d.garagePort));
  const node1 = d.bucket(1);
  for (const { artifacts: list } of built.values()) {
    for (const a of list) {
      const object = await node1(`artifacts/${a.cid}`);
      assert.equal(object.status, 200, `node 1 lacks ${a.name} ${a.cid}`);
      assert.equal(cid(new Uint8Array(await object.arrayBuffer())), a.cid);
    }
  }
});

test('a component built by a worker runs through both APIs; kill -9 of an API mid-run loses only its own requests', async () => {
  const res = await submit(apis[0], manifest('cluster_run'), ['component']);
  assert.equal(res.status, 202, await res.clone().text());
  const { job_id, build_id, workflow_id } = await res.json();
  const job = await waitJob(apis[0].url, job_id, { key: KEY, timeoutMs: 900_000 });
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const row = await (await get(apis[1], `/v1/builds/${build_id}`)).json();
  built.set(build_id, { name: 'cluster_run', targets: ['component'], artifacts: row.artifacts });
  const runOn = (api, bytes) =>
    fetch(`${api.url}/v1/workflows/${workflow_id}/run`, { method: 'POST', headers: { 'x-api-key': KEY }, body: bytes });
  // Each API fetches the component from the bucket on first use, checks it, compiles it.
  for (const api of apis) {
    const bytes = new TextEncoder().encode(`hello from ${api.name}`);
    const answer = await runOn(api, bytes);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal(await answer.json(), cid(bytes), api.name);
  }
  // Sixteen runs of 8 MiB on one API (about a second of work for its two
  // slots), short ones on the other; the first dies once every body is
  // sent, with runs under way and waiting.
  const [victim, other] = apis;
  const large = new Uint8Array(8 << 20).fill(1);
  const expectedLarge = cid(large);
  const sent = [];
  const cut = Array.from(
    { length: 16 },
    () =>
      new Promise((resolve) => {
        const req = request(`${victim.url}/v1/workflows/${workflow_id}/run`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-length': large.length },
        });
        req.on('error', resolve);
        req.on('response', (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve([r.statusCode, JSON.parse(body)]));
          r.on('error', resolve);
        });
        sent.push(new Promise((done) => req.end(large, done)));
      }),
  );
  const short = Array.from({ length: 20 }, async (_, i) => {
    const bytes = new TextEncoder().encode(`short ${i}`);
    const answer = await runOn(other, bytes);
    return [answer.status, await answer.json(), cid(bytes)];
  });
  await Promise.all(sent);
  d.kill(victim);
  // Answered before the kill (right), or cut off; never a wrong answer.
  const outcomes = await Promise.all(cut);
  const lost = outcomes.filter((o) => o instanceof Error);
  for (const o of lost) assert.match(String(o), /socket hang up|ECONNRESET/, String(o));
  for (const o of outcomes.filter((o) => !(o instanceof Error))) assert.deepEqual(o, [200, expectedLarge]);
  assert.ok(lost.length > 0, 'every run had finished before the kill');
  for (const [status, got, expected] of await Promise.all(short)) assert.deepEqual([status, got], [200, expected]);
  // Restarted, it runs again from its precompiled copy; the build is intact.
  apis = [await startApi('api1'), other];
  const again = await runOn(apis[0], new TextEncoder().encode('again'));
  assert.equal(again.status, 200, await again.clone().text());
  assert.equal(await again.json(), cid(new TextEncoder().encode('again')));
  const metrics = await (await get(apis[0], '/metrics')).text();
  assert.match(metrics, /braid_run_programs_total\{source="precompiled"\} 1\n/);
  assert.deepEqual((await (await get(apis[0], `/v1/builds/${build_id}`)).json()).artifacts, row.artifacts);
});

test('a deployment moved back and forth while both APIs run it: every run answers with the old build or the new one', async () => {
  // Two builds of one input type whose answers tell them apart: blake3 and sha2-256 CIDs.
  const sha2 = { ...JSON.parse(readFileSync(`${root}/workflows/cidv1_sha2_256.json`, 'utf8')), name: 'cluster_move' };
  const builds = [];
  for (const m of [manifest('cluster_run'), sha2]) {
    const res = await submit(apis[1], m, ['component']);
    assert.ok([200, 202].includes(res.status), await res.clone().text());
    const { job_id, build_id } = await res.json();
    if (job_id) {
      const job = await waitJob(apis[1].url, job_id, { key: KEY, timeoutMs: 900_000 });
      assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
    }
    builds.push(build_id);
  }
  const point = async (api, build_id) => {
    const res = await fetch(`${api.url}/v1/deployments/moving`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ build_id }),
    });
    assert.equal(res.status, 200, await res.clone().text());
  };
  const input = new TextEncoder().encode('moving');
  const answers = [cid(input), cid(input, { hasher: 'sha2-256' })];
  const runOn = async (api) => {
    const res = await fetch(`${api.url}/v1/deployments/moving/run`, { method: 'POST', headers: { 'x-api-key': KEY }, body: input });
    return [api.name, res.status, await res.text()];
  };
  await point(apis[0], builds[0]);
  // Four runners per API, each running until the moves are over.
  let moving = true;
  const runs = [];
  const runners = apis.flatMap((api) =>
    Array.from({ length: 4 }, async () => {
      while (moving) runs.push(await runOn(api));
    }),
  );
  // Ten moves through either API, each once a run has been answered since the last.
  for (let i = 1; i <= 10; i++) {
    const seen = runs.length;
    await until(() => runs.length > seen, 'no run was answered between two moves');
    await point(apis[i % 2], builds[i % 2]);
  }
  moving = false;
  await Promise.all(runners);
  for (const [api, status, body] of runs) {
    assert.equal(status, 200, `${api}: ${body}`);
    assert.ok(answers.includes(JSON.parse(body)), `${api} answered ${body}, from neither build`);
  }
  assert.ok(runs.length >= 10, `${runs.length} runs`);
  // The last move (to the blake3 build) is what both APIs run once they have seen it.
  for (const api of apis) {
    await until(async () => JSON.parse((await runOn(api))[2]) === answers[0], `${api.name} never ran the build the name was moved to last`);
  }
});

test('kill -9 of an API process mid-upload: nothing of the upload is kept or served, the other API serves on', async () => {
  const victim = apis[0];
  const name = 'cluster_cut_off';
  const body = JSON.stringify({ manifest: manifest(name), targets: ['native'] });
  // Half the body, then the process dies before the rest arrives.
  const sent = new Promise((resolve) => {
    const req = request(`${victim.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', resolve);
    req.on('response', (r) => resolve(new Error(`answered ${r.statusCode} to half a body`)));
    req.write(body.slice(0, body.length >> 1), () => setTimeout(() => d.kill(victim), 200));
  });
  const outcome = await sent;
  assert.match(String(outcome), /socket hang up|ECONNRESET/, String(outcome));
  apis = apis.filter((a) => a !== victim);
  const list = await (await get(apis[0], '/v1/workflows')).json();
  assert.ok(!JSON.stringify(list).includes(name), 'the cut-off upload was recorded');
  for (const { artifacts: arts } of built.values()) for (const a of arts) await download(apis[0], a.cid);
  apis.unshift(await startApi('api1'));
});

test('everything killed and restarted, PostgreSQL and Garage included: every build, job, artifact and published operation is still there', async () => {
  stopAll();
  pg('kill', d.pgDir);
  for (const n of ['1', '2', '3']) garage('kill', d.garageDir, n);
  await startAll();
  assert.ok(built.size >= 5);
  for (const [build, { name, manifest: m, targets, artifacts: list }] of built) {
    const row = await (await get(apis[1], `/v1/builds/${build}`)).json();
    assert.equal(row.state, 'succeeded');
    assert.deepEqual(row.artifacts, list);
    for (const a of list) await download(apis[0], a.cid);
    const again = await submit(apis[1], m ?? manifest(name), targets);
    assert.equal(again.status, 200, `${name} is built already`);
  }
  // The published operation too, even for a process whose data directory is new:
  // it takes the operation in from the database and the bucket.
  const fresh = await startApi('api3');
  for (const api of [...apis, fresh]) {
    const listed = await (await get(api, `/v1/operations/${published.name}`)).json();
    assert.deepEqual(listed.versions?.map((v) => v.version_id), [published.versionId], `${api.name}: ${JSON.stringify(listed)}`);
  }
  const checked = await fetch(`${fresh.url}/v1/validate`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(published.manifest),
  });
  assert.equal(checked.status, 200, await checked.clone().text());
  d.kill(fresh);
});

test('a damaged object in the S3 store is refused by every API, never served', async () => {
  const [, { name, targets, artifacts: list }] = [...built][0];
  const a = list.find((x) => x.name === 'crate.tar.gz');
  const s3 = d.bucket(2);
  const original = new Uint8Array(await (await s3(`artifacts/${a.cid}`)).arrayBuffer());
  assert.equal(cid(original), a.cid);
  // Truncated, as a writer that is not all-or-nothing would leave it.
  assert.equal((await s3(`artifacts/${a.cid}`, { method: 'PUT', body: original.slice(0, original.length >> 1) })).status, 200);
  for (const api of apis) {
    const res = await get(api, `/v1/artifacts/${a.cid}`);
    assert.equal(res.status, 404, 'a damaged artifact was served');
    // The first to read it removes it; the other has it no more.
    assert.match((await res.json()).detail, /damaged on the server|no artifact with this id/);
  }
  // Submitted again, the workflow is built anew and its artifact is whole.
  const res = await submit(apis[1], manifest(name), targets);
  assert.equal(res.status, 202, await res.clone().text());
  const job = await waitJob(apis[1].url, (await res.json()).job_id, { key: KEY, timeoutMs: 900_000 });
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  for (const api of apis) await download(api, a.cid);
});
