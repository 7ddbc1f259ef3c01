// The publish service end to end: a real `braid serve` on a loopback port,
// for what needs a socket, real builds or npm. Publishes each example
// workflow, polls its job, downloads the npm tarball, installs it with npm in
// a temp dir and runs it; a build over its time limit, kill -9 during a build
// and restart, and 50 parallel submissions (dedup under load). Then the
// service under abuse and faults: slow and idle clients, a body refused as too
// large while still arriving, a second server on the same data, a full disk, a
// deleted database, damaged artifacts, builds outliving the server, SIGTERM.
// The request/answer matrix (bad input, auth, invalid manifests, validate and
// generate, dedup answers, OpenAPI, metrics labels, 500 bodies) runs in
// process: generator/service/src/routes/tests/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync, chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync,
} from 'node:fs';
import { get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inputValue } from '../lib/reference.mjs';
import { contentId as cidOf } from '../lib/cid.mjs';
import { killHard, processesMentioning, spawnServer as startServer, waitJob as waitJobAt } from '../lib/server.mjs';
import { exited, until } from '../lib/wait.mjs';
import { root, manifest, braidSync } from '../lib/paths.mjs';

const KEY = 'test-key-1';
const data = mkdtempSync(join(tmpdir(), 'braid-serve-'));
const vectors = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8')).cases;

let server;
let base;

/** `braid serve` on `dataDir` with this file's key. */
const spawnServer = ({ dataDir, args = [], env = {}, ready }) => startServer({ dataDir, key: KEY, args, env, ready });

/** The main server of this file (restarted by the kill -9 test). */
async function start() {
  const s = await spawnServer({ dataDir: data, args: ['--workers', '1'] });
  base = s.url;
  return s.child;
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

const waitJob = (jobId, { url, ...options } = {}) => waitJobAt(url ?? base, jobId, { key: KEY, ...options });

/** No absolute path of the server in `text`: not the data directory, the repository, or the home directory. */
function assertNoServerPaths(text, what) {
  for (const path of [data, root, process.env.HOME].filter((p) => p && p.length > 1)) {
    assert.ok(!text.includes(path), `${what} shows the server path ${path}:\n${text}`);
  }
}

async function publish(body) {
  const res = await post('/v1/workflows', body);
  const answer = await res.json();
  if (res.status === 202) {
    const job = await waitJob(answer.job_id);
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
    assertNoServerPaths(job.log_tail, 'the public job log');
  } else {
    assert.equal(res.status, 200, JSON.stringify(answer));
  }
  const build = await (await api(`/v1/builds/${answer.build_id}`)).json();
  assert.equal(build.workflow_id, answer.workflow_id);
  return build;
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

test('each example workflow: publish, poll, download, npm install, run in Node', async () => {
  for (const name of ['cidv1_from_bytes', 'dual_cid_of_text', 'salted_cid', 'cid_of_file']) {
    const wf = await publish({ manifest: manifest(name) });
    assert.equal(wf.state, 'succeeded');
    // Built of the versions the submission resolved, each the registry's.
    const used = manifest(name).segments.flatMap((s) => s.sequence.map((step) => step.operation));
    for (const op of used) {
      const listed = await (await api(`/v1/operations/${op}`, { headers: { 'x-api-key': KEY } })).json();
      assert.ok(listed.versions.some((v) => v.version_id === wf.operations[op]), `${op}: ${JSON.stringify(wf.operations)}`);
    }
    // The registries' packages are artifacts of the build too: a .crate per
    // crate (the workflow's and those it vendors), one npm package.
    const all = wf.artifacts.map((a) => a.name).sort();
    const crates = all.filter((n) => n.endsWith('.crate'));
    assert.ok(crates.includes(`wf_${name}-0.1.0.crate`) && crates.includes('braid-support-0.1.0.crate'), `${crates}`);
    const names = all.filter((n) => !n.endsWith('.crate'));
    if (name === 'cid_of_file') {
      assert.deepEqual(names, ['crate.tar.gz'], 'native only: no npm packages');
      await download(wf.artifacts.find((a) => a.name === 'crate.tar.gz'));
      continue;
    }
    const unified = `npm-wf_${name}-0.1.0.tgz`;
    assert.deepEqual(names, ['crate.tar.gz', unified, 'pkg-bundler.tgz', 'pkg-node.tgz', 'pkg-web.tgz', `wf_${name}.wasm`]);
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

test('a build over its time limit is stopped and fails, with no artifacts and no build directory left', async () => {
  const data2 = mkdtempSync(join(tmpdir(), 'braid-timeout-'));
  const { child, url } = await spawnServer({ dataDir: data2, args: ['--build-timeout', '1'] });
  try {
    const body = { manifest: { ...manifest('cidv1_from_bytes'), name: `slow_${Date.now()}` }, targets: ['native', 'node'] };
    const res = await fetch(`${url}/v1/workflows`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
    const { job_id, build_id } = await res.json();
    const job = await waitJob(job_id, { url });
    assert.equal(job.state, 'failed');
    assert.match(job.error, /took longer than 1 s and was stopped/);
    const wf = await (await fetch(`${url}/v1/builds/${build_id}`)).json();
    assert.equal(wf.state, 'failed');
    assert.deepEqual(wf.artifacts, []);
    const builds = join(data2, 'builds');
    assert.deepEqual(existsSync(builds) ? readdirSync(builds) : [], [], 'the failed build left its directory');
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
  assert.equal(new Set(answers.map((a) => a.build_id)).size, 5);
  assert.equal(new Set(answers.map((a) => a.workflow_id)).size, 5);
  for (const id of jobs) assert.equal((await waitJob(id)).state, 'succeeded');
  assert.equal((await metric('braid_builds_started_total')) - started, 5, 'exactly 5 builds ran');
  assert.ok((await metric('braid_joined_builds_total')) >= 45);
});

test('kill -9 during a build, restart: the job runs again and only whole artifacts are served', async () => {
  const m = { ...manifest('dual_cid_of_text'), name: 'restarted' };
  const res = await post('/v1/workflows', { manifest: m, targets: ['native', 'node'] });
  assert.equal(res.status, 202);
  const { job_id, build_id } = await res.json();
  await waitJob(job_id, { until: ['running'] });
  // Once the build compiles (its crate generated), kill the server and its builds.
  const compiling = async () => (await (await api(`/v1/jobs/${job_id}`, { headers: { 'x-api-key': KEY } })).json()).log_tail.includes('generate done');
  await until(compiling, 'the build did not get past generating its crate');
  killHard(server);
  await exited(server);
  base = undefined;
  server = await start();
  const job = await waitJob(job_id);
  assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  const wf = await (await api(`/v1/builds/${build_id}`)).json();
  assert.equal(wf.state, 'succeeded');
  for (const a of wf.artifacts) await download(a);
  // Earlier builds are still there after the restart.
  const again = await post('/v1/workflows', { manifest: manifest('cidv1_from_bytes') });
  assert.equal(again.status, 200);
});

// ---- The service under abuse and faults (issue 9) ----

/** POST to another server than the main one. */
const postTo = (url, path, body, headers = {}) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** A fresh manifest (its own build) computing a CID natively. */
const fresh = (prefix) => ({ ...manifest('cidv1_from_bytes'), name: `${prefix}_${Date.now()}_${Math.floor(Math.random() * 1e6)}` });

test('a second server on the same data directory exits at once, naming the first', async () => {
  const second = braidSync(['serve', '--addr', '127.0.0.1:0', '--data', data, '--api-key', KEY], { timeout: 30_000 });
  assert.notEqual(second.status, 0, `the second server ran:\n${second.stderr}`);
  assert.equal(second.signal, null, 'it exited by itself');
  assert.match(second.stderr, new RegExp(`in use by another braid serve \\(pid ${server.pid}, address ${base.replace(/[.]/g, '\\.')}\\)`));
  assert.equal((await api('/healthz')).status, 200, 'the first still serves');
});

test('/v1/generate starts no process (the lock is pruned in memory) and gives the lock cargo would', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-cargo-count-'));
  const count = join(dir, 'count');
  const realCargo = spawnSync('sh', ['-c', 'command -v cargo'], { encoding: 'utf8' }).stdout.trim();
  writeFileSync(join(dir, 'cargo'), `#!/bin/sh\necho "$*" >> '${count}'\nexec '${realCargo}' "$@"\n`);
  chmodSync(join(dir, 'cargo'), 0o755);
  const s = await spawnServer({ dataDir: join(dir, 'data'), env: { CARGO: join(dir, 'cargo') } });
  try {
    const names = ['cidv1_from_bytes', 'dual_cid_of_text', 'salted_cid', 'cid_of_file'];
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => postTo(s.url, '/v1/generate', manifest(names[i % 4]))),
    );
    for (const a of answers) assert.equal(a.status, 200, await a.text());
    // `cargo --version`: the toolchain check at start, before any request.
    const ran = readFileSync(count, 'utf8').trim().split('\n').filter((line) => line !== '--version');
    assert.equal(ran.length, 1, `cargo ran ${ran.length} times for 24 requests:\n${ran.join('\n')}`);
    // The lock in the tarball is the one `braid generate` (cargo) writes.
    const tgz = new Uint8Array(await (await postTo(s.url, '/v1/generate', manifest('salted_cid'))).arrayBuffer());
    writeFileSync(join(dir, 'crate.tar.gz'), tgz);
    const served = spawnSync('tar', ['xzOf', 'crate.tar.gz', 'wf_salted_cid/Cargo.lock'], { cwd: dir, encoding: 'utf8' }).stdout;
    const cli = braidSync(['generate', `${root}/workflows/salted_cid.json`, '-o', join(dir, 'cli')]);
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(served, readFileSync(join(dir, 'cli', 'Cargo.lock'), 'utf8'));
  } finally {
    killHard(s.child);
  }
});

/** Resolves when `socket` is closed by the server (or fails with `message` after `ms`). */
function closedByServer(socket, message, ms = 120_000) {
  return new Promise((resolve, reject) => {
    let received = '';
    socket.on('data', (d) => (received += d));
    const timer = setTimeout(() => reject(new Error(message)), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on('error', () => {});
  });
}

test('idle, slow-header and slow-body clients are cut off; past the connection cap new ones wait their turn', async () => {
  const s = await spawnServer({
    dataDir: mkdtempSync(join(tmpdir(), 'braid-slow-')),
    args: ['--header-timeout', '1', '--idle-timeout', '2', '--body-timeout', '1', '--max-connections', '6'],
  });
  const { port } = new URL(s.url);
  const open = () => connect({ host: '127.0.0.1', port: Number(port) });
  const timers = [];
  const events = [];
  try {
    // Six idle connections fill the cap; a request after them waits until one is closed.
    const idle = Array.from({ length: 6 }, open);
    await Promise.all(idle.map((c) => new Promise((r) => c.on('connect', r))));
    const idleClosed = idle.map((c) => closedByServer(c, 'an idle connection was not closed').then((r) => (events.push('idle closed'), r)));
    // The server says when it closes idle connections, so that clients pooling them stop reusing one in time.
    const answered = fetch(`${s.url}/healthz`).then((res) => (events.push('answered'), `${res.status} ${res.headers.get('keep-alive')}`));
    const slowHeaders = Array.from({ length: 3 }, () => {
      const c = open();
      c.write('GET /healthz HTTP/1.1\r\n');
      timers.push(setInterval(() => c.writable && c.write('X-Slow: 1\r\n'), 200));
      return c;
    });
    const slowBody = open();
    slowBody.write('POST /v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    timers.push(setInterval(() => slowBody.writable && slowBody.write(' '), 200));
    const keptAlive = open();
    keptAlive.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const received = await Promise.all([
      ...idleClosed,
      ...slowHeaders.map((c) => closedByServer(c, 'a slowloris connection was not closed')),
      closedByServer(slowBody, 'a slow body was not cut off'),
      closedByServer(keptAlive, 'an idle kept-alive connection was not closed'),
    ]);
    assert.match(received.at(-2), /^HTTP\/1\.1 408 /, 'the slow body gets 408');
    assert.match(received.at(-1), /^HTTP\/1\.1 200 /, 'the kept-alive connection got its answer first');
    assert.equal(await answered, '200 timeout=2', 'the request past the cap is answered');
    assert.ok(events.indexOf('idle closed') < events.indexOf('answered'), `past the cap, answered before a slot was free: ${events}`);
    // On a new connection: fetch could reuse the pooled one just as the 2 s idle timeout closes it.
    const fresh = await new Promise((resolve, reject) => get(`${s.url}/healthz`, { agent: false }, (res) => resolve(res.statusCode)).on('error', reject));
    assert.equal(fresh, 200, 'new connections are still answered');
  } finally {
    timers.forEach(clearInterval);
    killHard(s.child);
  }
});

test('silent connections are cut within the first-byte timeout, one address holds at most its share, /healthz answers others', async () => {
  const s = await spawnServer({
    dataDir: mkdtempSync(join(tmpdir(), 'braid-silent-')),
    args: ['--first-byte-timeout', '1', '--max-connections', '16', '--max-connections-per-client', '8'],
  });
  const { port } = new URL(s.url);
  try {
    // 40 connections that never send a byte, from one address: the 32 past its share are closed at once,
    // the 8 others when their first byte does not come.
    const silent = Array.from({ length: 40 }, () => connect({ host: '127.0.0.1', port: Number(port) }));
    const closed = silent.map((c) => closedByServer(c, 'a silent connection was not closed', 15_000));
    // Meanwhile another address is answered (the global cap is 16: the silent host holds 8).
    const other = await new Promise((resolve, reject) =>
      get(`${s.url}/healthz`, { agent: false, localAddress: '127.0.0.2' }, (res) => resolve(res.statusCode)).on('error', reject));
    assert.equal(other, 200, '/healthz answers another client while one address holds its share');
    await Promise.all(closed);
    // And the silent address itself is answered once its connections are gone.
    const again = await new Promise((resolve, reject) => get(`${s.url}/healthz`, { agent: false }, (res) => resolve(res.statusCode)).on('error', reject));
    assert.equal(again, 200);
  } finally {
    killHard(s.child);
  }
});

test('a body refused as too large before it is read still reaches a client that goes on sending it', async () => {
  // The server answers 413 from Content-Length alone and closes. Closing with
  // unread bytes would reset the connection: the client, still writing,
  // would lose the answer (fetch: "fetch failed"). Here the client reads the
  // answer first, then sends the rest: every byte must be accepted.
  const { port } = new URL(base);
  const socket = connect({ host: '127.0.0.1', port: Number(port) });
  const rest = Buffer.alloc(3 << 20, 0x20);
  let received = '';
  const failed = new Promise((_, reject) => socket.on('error', (e) => reject(new Error(`the connection was reset: ${e.message}`))));
  const answered = new Promise((resolve) => socket.on('data', (d) => (received += d) && received.includes('\r\n\r\n') && resolve()));
  socket.write(
    `POST /v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${rest.length + 1}\r\n\r\n{`,
  );
  await Promise.race([answered, failed]);
  assert.match(received, /^HTTP\/1\.1 413 /);
  await Promise.race([new Promise((resolve) => socket.end(rest, resolve)), failed]);
  await Promise.race([new Promise((resolve) => socket.on('close', resolve)), failed]);
  assert.match(received, /"status":413/, 'the whole problem document arrived');
});

test('a damaged artifact is never confirmed (no 304) and is built again on the next submission', async () => {
  const body = { manifest: fresh('damaged'), targets: ['native'] };
  const wf = await publish(body);
  const { cid } = wf.artifacts[0];
  const file = join(data, 'artifacts', cid);
  // Found by a submission: rebuilt.
  writeFileSync(file, 'not the artifact');
  const again = await post('/v1/workflows', body);
  assert.equal(again.status, 202, 'a submission of a build with a damaged artifact builds again');
  const job = await waitJob((await again.json()).job_id);
  assert.equal(job.state, 'succeeded', job.error);
  assert.deepEqual(await download(wf.artifacts[0]), new Uint8Array(readFileSync(file)), 'rebuilt with the same bytes');
  // Found by a conditional GET: no 304, removed, rebuilt on the next submission.
  writeFileSync(file, 'damaged again');
  const cached = await api(`/v1/artifacts/${cid}`, { headers: { 'if-none-match': `"${cid}"` } });
  assert.notEqual(cached.status, 304, 'a damaged artifact was confirmed with 304');
  assert.equal(cached.status, 404);
  assert.match((await cached.json()).detail, /damaged.*submit its workflow again/);
  const third = await post('/v1/workflows', body);
  assert.equal(third.status, 202);
  assert.equal((await waitJob((await third.json()).job_id)).state, 'succeeded');
  await download(wf.artifacts[0]);
});

test('builds die with the server (kill -9), never share a directory, and SIGTERM stops the server gracefully', async () => {
  const data3 = mkdtempSync(join(tmpdir(), 'braid-orphans-'));
  const target = mkdtempSync(join(tmpdir(), 'braid-orphans-target-'));
  // Holding the staging lock keeps the build waiting inside `braid build`.
  const holder = spawn('flock', [join(target, 'braid-staging.lock'), 'sleep', '600'], { stdio: 'ignore' });
  await until(() => existsSync(join(target, 'braid-staging.lock')), 'flock did not start');
  let s = await spawnServer({ dataDir: data3, args: ['--target-dir', target] });
  try {
    const res = await postTo(s.url, '/v1/workflows', { manifest: fresh('orphan'), targets: ['native'] });
    const { job_id } = await res.json();
    // Past its last line of output, waiting for the lock (so it cannot die of a broken pipe).
    const waiting = async () => (await (await fetch(`${s.url}/v1/jobs/${job_id}`, { headers: { 'x-api-key': KEY } })).json()).log_tail.includes('generate done');
    await until(waiting, 'the build did not reach the staging lock');
    assert.ok(processesMentioning(job_id).length > 0, 'the build runs');
    process.kill(s.child.pid, 'SIGKILL');
    await until(() => processesMentioning(job_id).length === 0, 'the build outlived the server killed by kill -9');
    // Restarted: the job runs again, in a directory of its own.
    s = await spawnServer({ dataDir: data3, args: ['--target-dir', target] });
    await until(() => processesMentioning(`${job_id}.2/`).length > 0, 'the job did not run again');
    assert.ok(!existsSync(join(data3, 'builds', `${job_id}.1`)), 'the first attempt left its directory');
    // SIGTERM: the server stops its build, finishes, exits 0.
    const exited = new Promise((resolve) => s.child.on('exit', (code, signal) => resolve({ code, signal })));
    process.kill(s.child.pid, 'SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null }, s.log());
    assert.match(s.log(), /shutting down/);
    await until(() => processesMentioning(job_id).length === 0, 'the build outlived the server stopped by SIGTERM');
    holder.kill();
    // The next start (warm target directory) runs the job to the end.
    s = await spawnServer({ dataDir: data3 });
    const job = await waitJob(job_id, { url: s.url });
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  } finally {
    holder.kill();
    killHard(s.child);
  }
});

test('SIGTERM at any point of start-up stops the server gracefully: exit 0, its build queued again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'braid-startup-'));
  /** SIGTERM to `s`; it exits 0 of its own accord, saying it stopped. */
  const stopped = async (s, when) => {
    process.kill(s.child.pid, 'SIGTERM');
    assert.deepEqual(await exited(s.child), { code: 0, signal: null }, `SIGTERM ${when}:\n${s.log()}`);
    assert.match(s.log(), /braid serve: stopped/, `SIGTERM ${when}`);
  };
  const servers = [];
  const start = (ready) => spawnServer({ dataDir, args: ['--workers', '1'], ready }).then((s) => servers.push(s) && s);
  try {
    // Before it listens: its handlers are in place, the data directory and
    // the registry not yet opened.
    await stopped(await start('starting'), 'before listening');
    // Right after it listens.
    await stopped(await start('listening'), 'right after listening');
    // While a build starts: the build stops, its job waits for the next start.
    let s = await start('listening');
    const res = await postTo(s.url, '/v1/workflows', { manifest: fresh('sigterm'), targets: ['native'] });
    assert.equal(res.status, 202);
    const { job_id } = await res.json();
    await waitJob(job_id, { url: s.url, until: ['running'] });
    await stopped(s, 'while a build starts');
    assert.match(s.log(), /shutting down/);
    await until(() => processesMentioning(job_id).length === 0, 'the build outlived the server stopped by SIGTERM');
    s = await start('listening');
    const job = await waitJob(job_id, { url: s.url });
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
    await stopped(s, 'after a build');
  } finally {
    for (const s of servers) killHard(s.child);
  }
});

test('a deleted database: writes get 503, health is degraded, reads go on', async () => {
  const data4 = mkdtempSync(join(tmpdir(), 'braid-nodb-'));
  const s = await spawnServer({ dataDir: data4 });
  try {
    rmSync(join(data4, 'braid.sqlite'));
    const res = await postTo(s.url, '/v1/workflows', { manifest: fresh('nodb'), targets: ['native'] });
    const problem = await res.json();
    assert.equal(res.status, 503, JSON.stringify(problem));
    assert.match(problem.detail, /braid\.sqlite was deleted or replaced/);
    const health = await fetch(`${s.url}/healthz`);
    assert.equal(health.status, 503);
    const body = await health.json();
    assert.equal(body.status, 'degraded');
    assert.match(body.problems.join('\n'), /deleted or replaced/);
    assert.equal((await fetch(`${s.url}/v1/operations`)).status, 200);
    assert.match(s.log(), /braid\.sqlite was deleted or replaced while the server ran/);
  } finally {
    killHard(s.child);
  }
});

test('a full disk ends the job with a reason and leaves no file; health says so; once freed, the same submission builds', async (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'braid-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    t.skip(`mounting a small tmpfs needs root: ${mounted.stderr.trim()}`);
    return;
  }
  const filler = join(mnt, 'filler');
  /** Fills the file system, then frees `leave` bytes. */
  const fill = (leave) => {
    for (const chunk of [1 << 20, 1 << 16, 1 << 12]) {
      try {
        for (;;) appendFileSync(filler, Buffer.alloc(chunk));
      } catch (e) {
        if (e.code !== 'ENOSPC') throw e;
      }
    }
    if (leave > 0) truncateSync(filler, statSync(filler).size - leave);
  };
  const dataDir = join(mnt, 'data');
  let s;
  try {
    s = await spawnServer({ dataDir });
    // The lock seed is resolved (in a scratch directory under the data) first.
    assert.equal((await postTo(s.url, '/v1/generate', manifest('cidv1_from_bytes'))).status, 200);
    fill(64 * 1024); // room for the submission, not for the build
    const body = { manifest: fresh('full'), targets: ['native'] };
    const res = await postTo(s.url, '/v1/workflows', body);
    assert.equal(res.status, 202, await res.clone().text());
    const first = await res.json();
    const job = await waitJob(first.job_id, { url: s.url });
    assert.equal(job.state, 'failed');
    assert.match(job.error, /No space left on device/);
    assert.ok(!job.error.includes(mnt), job.error);
    assert.deepEqual(existsSync(join(dataDir, 'builds')) ? readdirSync(join(dataDir, 'builds')) : [], []);
    assert.deepEqual(readdirSync(join(dataDir, 'artifacts')).filter((f) => f.endsWith('.tmp')), []);
    fill(0);
    let degraded;
    await until(async () => (degraded = await fetch(`${s.url}/healthz`)).status === 503, 'a full disk is not reported');
    const health = await degraded.json();
    assert.equal(health.status, 'degraded');
    assert.match(health.problems.join('\n'), /No space left on device/);
    assert.ok(!JSON.stringify(health).includes(mnt), `a server path in /healthz: ${JSON.stringify(health)}`);
    rmSync(filler);
    assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
    const again = await postTo(s.url, '/v1/workflows', body);
    assert.equal(again.status, 202);
    const second = await again.json();
    assert.notEqual(second.job_id, first.job_id, 'joined the failed job');
    const rebuilt = await waitJob(second.job_id, { url: s.url });
    assert.equal(rebuilt.state, 'succeeded', `${rebuilt.error}\n${rebuilt.log_tail}`);
  } finally {
    if (s) {
      killHard(s.child);
      await exited(s.child);
    }
    spawnSync('umount', ['-l', mnt]);
  }
});
