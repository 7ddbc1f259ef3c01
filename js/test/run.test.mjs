// The service's executor against hostile operations: op_trap (kept by
// generator/cli/tests/e2e.rs in target/wf/op_trap) added with `braid ops
// add` to a service's registry, as an operator would, and the workflow
// `trapping` over it built as a component by that service. Every
// misbehaviour gets its own problem document, a counter kept in a `static`
// reads 1 on every request (a fresh instance each), and valid requests
// interleaved with hostile ones all answer correctly; past the run slots
// and the queue, 503 with Retry-After; after a restart the precompiled
// component is used. Also multipart inputs and the body limit of runs, and
// deployments: moved, rolled back, their budgets, their cap on runs at
// once and their metrics.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { braid, killHard, spawnServer, waitJob } from '../lib/server.mjs';
import { wfOut } from '../lib/paths.mjs';
import { until } from '../lib/wait.mjs';
import { run as runCommand } from '../lib/run.mjs';

const KEY = 'run-key';
const TIME_MS = 300;
const manifest = {
  name: 'trapping',
  version: '0.1.0',
  description: 'traps on demand (a test)',
  segments: [{ inputs: [-1], sequence: [{ operation: 'op_trap', version: '^0.1' }] }],
};

let dataDir;
let server;
let runPath;

/** `braid serve` on dataDir with the run flags `args` (and a key, a wide per-client cap). */
async function serve(args) {
  server = await spawnServer({
    dataDir,
    key: KEY,
    args: ['--max-connections-per-client', '512', '--time-limit', String(TIME_MS), '--memory-limit', '64', '--output-limit', '1', ...args],
  });
  return server.url;
}

/** POSTs `input` (raw bytes) to the run endpoint; { status, body, timing }. */
async function run(url, input, headers = {}) {
  const res = await fetch(`${url}${runPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream', ...headers },
    body: input,
  });
  const text = await res.text();
  const body = res.headers.get('content-type') === 'application/problem+json' ? JSON.parse(text) : text;
  return { status: res.status, body, timing: res.headers.get('server-timing'), retryAfter: res.headers.get('retry-after') };
}

/** The run's whole time from Server-Timing, in ms. */
const runMs = (timing) => Number(/run;dur=([0-9.]+)/.exec(timing)?.[1]);

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'braid-run-'));
  // An operator adds the operation to the service's registry (the data
  // directory is its BRAID_HOME), then starts it.
  execFileSync(braid, ['ops', 'add', `${wfOut}/op_trap`], { env: { ...process.env, BRAID_HOME: dataDir }, stdio: 'pipe' });
  const url = await serve(['--public-run', '--run-queue', '256']);
  runPath = await submit(url, manifest);
});

/** Submits `manifest` to the service at `url`, built as a component; its run path. */
async function submit(url, manifest) {
  const res = await fetch(`${url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ manifest, targets: ['component'] }),
  });
  const submitted = await res.json();
  // 200: built already (by an earlier test); 202: a job to wait for.
  assert.ok([200, 202].includes(res.status), JSON.stringify(submitted));
  if (res.status === 202) {
    const job = await waitJob(url, submitted.job_id, { key: KEY });
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  }
  return `/v1/workflows/${submitted.workflow_id}/run`;
}

after(() => {
  if (server) killHard(server.child);
  rmSync(dataDir, { recursive: true, force: true });
});

// What each hostile input must give: status, and the problem's detail.
const HOSTILE = {
  loop: [422, new RegExp(`^the run took longer than its ${TIME_MS} ms and was stopped$`)],
  grow: [422, /^the run needed more than its 67108864 bytes of memory and was stopped$/],
  // The kind of trap, not wasmtime's "error while executing at wasm backtrace:".
  trap: [422, /^the module trapped: wasm `unreachable` instruction executed \(an operation panicked/],
  oom: [422, /^the module trapped: (?!error while executing)\S/],
  big: [422, /^the output is over the limit of 1048576 bytes$/],
};

test('100 hostile requests and 100 valid ones at once: a problem each, fresh state each, every valid answer right', async () => {
  const url = server.url;
  const kinds = [...Object.keys(HOSTILE), 'count'];
  const requests = [];
  for (let i = 0; i < 100; i++) {
    const kind = kinds[i % kinds.length];
    requests.push(run(url, kind).then((r) => ({ kind, ...r })));
    const echo = `valid ${i}`;
    requests.push(run(url, echo).then((r) => ({ kind: 'echo', echo, ...r })));
  }
  const started = Date.now();
  const answers = await Promise.all(requests);
  console.log(`200 requests in ${Date.now() - started} ms`);
  const loops = [];
  for (const a of answers) {
    const what = `${a.kind}: ${a.status} ${JSON.stringify(a.body)}`;
    assert.match(a.timing ?? '', /^inst;dur=\d+\.\d{3}, run;dur=\d+\.\d{3}$/, what);
    if (a.kind === 'echo') {
      assert.equal(a.status, 200, what);
      assert.equal(a.body, a.echo, what);
    } else if (a.kind === 'count') {
      // A `static` counter: 1, on every request (a fresh instance each).
      assert.equal(a.status, 200, what);
      assert.equal(a.body, '1', what);
    } else {
      const [status, detail] = HOSTILE[a.kind];
      assert.equal(a.status, status, what);
      assert.equal(a.body.status, status, what);
      assert.match(a.body.detail, detail, what);
      if (a.kind === 'loop') loops.push(runMs(a.timing));
    }
  }
  // Stopped by the budget, not by anything later (the run's own time,
  // from Server-Timing; a loose bound, five times the budget: the clock is
  // wall time, and a busy machine delays the tick that stops a run).
  loops.sort((x, y) => x - y);
  const median = loops[loops.length >> 1];
  assert.ok(median < 5 * TIME_MS, `loops stopped after ${loops.join(', ')} ms (median ${median})`);

  const metrics = await (await fetch(`${url}/metrics`)).text();
  for (const [outcome, n] of [['time', 17], ['memory', 17], ['trap', 34], ['output', 16], ['ok', 116]]) {
    assert.match(metrics, new RegExp(`braid_runs_total\\{outcome="${outcome}"\\} ${n}\\n`), outcome);
  }
  assert.match(metrics, /braid_run_programs_total\{source="compiled"\} 1\n/);
  assert.match(metrics, /braid_run_programs_total\{source="memory"\} 199\n/);
});

test('multipart inputs by name; the input limit is the body limit of runs (not --max-body)', async () => {
  const url = server.url;
  const form = (name, value) => {
    const body = new FormData();
    body.append(name, new Blob([value]));
    return body;
  };
  const post = (body, headers = {}) => fetch(`${url}${runPath}`, { method: 'POST', body, headers });
  const ok = await post(form('input0', 'from a form'), { accept: 'application/octet-stream' });
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), 'from a form');
  const unknown = await post(form('photo', 'x'));
  assert.equal(unknown.status, 400);
  assert.match((await unknown.json()).detail, /^the input `input0` is missing; this workflow takes input0$/);
  const twice = form('input0', 'a');
  twice.append('input0', new Blob(['b']));
  assert.match((await (await post(twice)).json()).detail, /^the input `input0` is given 2 times; give it once$/);
  // 3 MiB: over the default --max-body (2 MiB), within the default input limit (16 MiB).
  const large = new Uint8Array(3 << 20).fill(97);
  const echoed = await post(large, { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' });
  // Run, not refused: echoed back, it is over the 1 MiB output limit
  // (measured before the bytes become values: see braid-engine's fast.rs).
  assert.equal(echoed.status, 422);
  assert.match((await echoed.json()).detail, /^the output is over the limit of 1048576 bytes$/);
  // The same as a part of a form: multipart reads up to the input limit too.
  const inForm = await post(form('input0', large));
  assert.equal(inForm.status, 422, 'a 3 MiB part was refused');
  assert.match((await inForm.json()).detail, /^the output is over the limit of 1048576 bytes$/);
  const huge = await post(new Uint8Array((16 << 20) + 1), { 'content-type': 'application/octet-stream' });
  assert.equal(huge.status, 413);
  assert.match((await huge.json()).detail, /the limit here is 16777216 bytes/);
});

test('media types are parsed: their case and parameters do not matter, a longer name is another type', async () => {
  const post = (body, headers) => fetch(`${server.url}${runPath}`, { method: 'POST', body, headers });
  const base64 = Buffer.from('as JSON').toString('base64');
  const json = await post(`["${base64}"]`, { 'content-type': 'APPLICATION/JSON; charset=UTF-8', accept: 'application/octet-stream' });
  assert.deepEqual([json.status, await json.text()], [200, 'as JSON'], 'APPLICATION/JSON was not read as JSON');
  const other = await post('["raw"]', { 'content-type': 'application/jsonx', accept: 'application/octet-stream' });
  assert.deepEqual([other.status, await other.text()], [200, '["raw"]'], 'application/jsonx was read as JSON');
  const weighted = await post('x', { 'content-type': 'application/octet-stream', accept: 'application/json;q=0.5, Application/Octet-Stream' });
  assert.deepEqual([weighted.status, await weighted.text()], [200, 'x'], 'an Accept list naming raw bytes');
  const refused = await post('x', { 'content-type': 'application/octet-stream', accept: 'application/octet-stream;q=0' });
  const asJson = Buffer.from(JSON.parse(await refused.text()), 'base64').toString();
  assert.equal(asJson, 'x', 'raw bytes given with q=0');
});

test('past the run slots and the queue, 503 with Retry-After; after a restart, the precompiled component and a key', async () => {
  // Gone before its data directory is taken again.
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  killHard(server.child);
  await exited;
  // One slot, one waiting, and runs that need a key again.
  const url = await serve(['--run-slots', '1', '--run-queue', '1']);
  const keyed = { 'x-api-key': KEY };
  assert.equal((await run(url, 'hello')).status, 401, 'a key is needed without --public-run');
  const first = await run(url, 'count', keyed);
  assert.deepEqual([first.status, first.body], [200, '1']);
  const answers = await Promise.all([0, 1, 2, 3, 4, 5].map(() => run(url, 'loop', keyed)));
  const busy = answers.filter((a) => a.status === 503);
  assert.ok(busy.length >= 3, `at most 2 of 6 admitted: ${answers.map((a) => a.status)}`);
  for (const a of busy) {
    assert.match(a.retryAfter ?? '', /^\d+$/);
    assert.match(a.body.detail, /runs/);
  }
  for (const a of answers.filter((a) => a.status !== 503)) assert.match(a.body.detail, /took longer than/);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  assert.match(metrics, /braid_run_programs_total\{source="precompiled"\} 1\n/, 'loaded from <data>/precompiled');
  assert.doesNotMatch(metrics, /source="compiled"/);
});

test('two keys: one floods the run slot with loops, the other is served next, never refused', async () => {
  const gone = new Promise((resolve) => server.child.once('exit', resolve));
  killHard(server.child);
  await gone;
  const OTHER = 'run-key-other';
  // One slot, a queue of 4 (which one key may fill, and each other key
  // still queue one run past).
  const url = await serve(['--run-slots', '1', '--run-queue', '4', '--api-key', OTHER]);
  const order = [];
  const tagged = (name, answer) => answer.then((r) => (order.push(`${name} ${r.status}`), { name, ...r }));
  const flood = Array.from({ length: 12 }, (_, i) => tagged(`a${i}`, run(url, 'loop', { 'x-api-key': KEY })));
  // A refusal means the flood fills the queue: now the other key.
  const refused = flood.map((p) => p.then((r) => (r.status === 503 ? r : new Promise(() => {}))));
  const first = await Promise.race([...refused, Promise.all(flood)]);
  assert.ok(!Array.isArray(first), `the flood was never refused, the queue not bounded: ${order.join(', ')}`);
  const other = await tagged('b', run(url, 'count', { 'x-api-key': OTHER }));
  assert.deepEqual([other.status, other.body], [200, '1'], 'the other key was refused or failed');
  const answers = await Promise.all(flood);
  const admitted = answers.filter((a) => a.status !== 503);
  for (const a of admitted) assert.match(a.body.detail, /took longer than/);
  // Served at the next free slot, ahead of the loops the flood queued before it.
  const last = order.findLastIndex((o) => o.startsWith('a') && !o.endsWith('503'));
  assert.ok(order.indexOf('b 200') < last, `the other key waited for the flood: ${order.join(', ')}`);
});

/** Two inputs: op_trap on the first, then the second after its output. */
const PAIR = {
  name: 'trapping_pair',
  version: '0.1.0',
  description: 'op_trap on one input, then the other input after its output (a test)',
  segments: [
    { inputs: [-1], sequence: [{ operation: 'op_trap', version: '^0.1' }] },
    { inputs: [0, -1], sequence: [{ operation: 'op_collect', version: '^0.1' }, { operation: 'op_concat', version: '^0.1' }] },
  ],
};

/** The most memory the process `pid` has held (VmHWM), in bytes. */
const peakBytes = (pid) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

test('what a run costs the host stays within its budgets: two inputs and a 16 MiB output', async () => {
  const gone = new Promise((resolve) => server.child.once('exit', resolve));
  killHard(server.child);
  await gone;
  const MiB = 1 << 20;
  const [memory, input, output] = [128, 16, 16];
  server = await spawnServer({
    dataDir,
    key: KEY,
    // A generous time: what is measured is memory, on a busy machine too.
    args: ['--run-slots', '1', '--time-limit', '30000', '--memory-limit', String(memory), '--input-limit', String(input), '--output-limit', String(output)],
  });
  // Two inputs (neither run's typed shape): op_trap's 8 MiB for `big`,
  // then the second input after it.
  const path = await submit(server.url, PAIR);
  const post = (first, second) => {
    const body = new FormData();
    body.append('input0', new Blob([first]));
    body.append('input1', new Blob([second]));
    return fetch(`${server.url}${path}`, { method: 'POST', body, headers: { 'x-api-key': KEY, accept: 'application/octet-stream' } });
  };
  // The program loaded, and a small run: what the server holds anyway.
  const small = await post('a', 'b');
  assert.deepEqual([small.status, await small.text()], [200, 'ab']);
  const before = peakBytes(server.child.pid);
  const second = new Uint8Array(8 * MiB).fill(1);
  const answer = await post('big', second);
  const bytes = new Uint8Array(await answer.arrayBuffer());
  assert.equal(answer.status, 200, new TextDecoder().decode(bytes.subarray(0, 300)));
  assert.equal(bytes.length, 16 * MiB);
  assert.deepEqual([bytes[0], bytes[8 * MiB - 1], bytes[8 * MiB], bytes[16 * MiB - 1]], [7, 7, 1, 1]);
  // The bound the book gives: run slots x (memory + input + output). As
  // wasmtime's generic values (40 bytes a byte), the output alone took
  // more than 600 MiB.
  const grew = peakBytes(server.child.pid) - before;
  console.log(`the server's peak memory grew ${(grew / MiB).toFixed(1)} MiB for the 16 MiB output`);
  assert.ok(grew <= (memory + input + output) * MiB, `the server's peak memory grew ${(grew / MiB).toFixed(1)} MiB`);
});

test('a rate per key (--run-rate-per-key): past it 429 with Retry-After, for that key only', async () => {
  const gone = new Promise((resolve) => server.child.once('exit', resolve));
  killHard(server.child);
  await gone;
  const OTHER = 'run-key-rated';
  // One run per 100 s, bursts of one: a second run of a key right after its
  // first is refused however slow the machine.
  server = await spawnServer({ dataDir, key: KEY, args: ['--run-rate-per-key', '0.01', '--api-key', OTHER] });
  const first = await run(server.url, 'count', { 'x-api-key': KEY });
  assert.deepEqual([first.status, first.body], [200, '1']);
  const second = await run(server.url, 'count', { 'x-api-key': KEY });
  assert.equal(second.status, 429, JSON.stringify(second.body));
  assert.match(second.body.detail, /^this key may start 0\.01 runs a second; retry shortly$/);
  assert.ok(Number(second.retryAfter) > 1 && Number(second.retryAfter) <= 100, `Retry-After: ${second.retryAfter}`);
  const other = await run(server.url, 'count', { 'x-api-key': OTHER });
  assert.deepEqual([other.status, other.body], [200, '1'], "another key has its own rate");
});

test('a deployment runs the build it points at: made, moved to another workflow, rolled back', async () => {
  const gone = new Promise((resolve) => server.child.once('exit', resolve));
  killHard(server.child);
  await gone;
  server = await spawnServer({ dataDir, key: KEY });
  const url = server.url;
  const keyed = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const put = async (body) => {
    const res = await fetch(`${url}/v1/deployments/trap`, { method: 'PUT', headers: keyed, body: JSON.stringify(body) });
    const json = await res.json();
    assert.equal(res.status, 200, JSON.stringify(json));
    return json;
  };
  const trapping = runPath.split('/')[3];
  const pair = (await submit(url, PAIR)).split('/')[3];
  const made = await put({ workflow_id: trapping });
  const raw = (input) => fetch(`${url}/v1/deployments/trap/run`, {
    method: 'POST',
    body: input,
    headers: { 'x-api-key': KEY, 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
  });
  const counted = await raw('count');
  assert.deepEqual([counted.status, await counted.text()], [200, '1']);
  // Moved to another workflow: the same URL runs its build, with its inputs.
  await put({ workflow_id: pair });
  const body = new FormData();
  body.append('input0', new Blob(['a']));
  body.append('input1', new Blob(['b']));
  const moved = await fetch(`${url}/v1/deployments/trap/run`, { method: 'POST', body, headers: { 'x-api-key': KEY, accept: 'application/octet-stream' } });
  assert.deepEqual([moved.status, await moved.text()], [200, 'ab']);
  // Rolled back to the first build.
  const back = await put({ build_id: made.build_id });
  assert.equal(back.version, 3);
  assert.deepEqual(back.history.map((v) => v.version), [3, 2, 1]);
  const echoed = await raw('hello');
  assert.deepEqual([echoed.status, await echoed.text()], [200, 'hello']);
  // Budgets of its own: a loop is stopped at the deployment's 100 ms, not
  // the service's 1000.
  await put({ build_id: made.build_id, limits: { time_ms: 100 } });
  const stopped = await raw('loop');
  const problem = await stopped.json();
  assert.equal(stopped.status, 422, JSON.stringify(problem));
  assert.match(problem.detail, /^the run took longer than its 100 ms and was stopped$/);
  // One run at once: a second, while a loop runs to the service's time
  // budget, is refused (429) rather than queued. Seen in flight by the
  // deployment's gauge; a try whose loop ended before the second run came
  // proves nothing and is made again.
  await put({ build_id: made.build_id, limits: { concurrent: 1 } });
  const metrics = async () => (await fetch(`${url}/metrics`)).text();
  let refused;
  for (let attempt = 0; attempt < 5 && !refused; attempt++) {
    let looping = true;
    const loop = raw('loop').then(async (res) => {
      looping = false;
      return [res.status, await res.json()];
    });
    const inFlight = /^braid_deployment_runs_in_progress\{deployment="trap"\} 1$/m;
    await until(async () => !looping || inFlight.test(await metrics()), 'the loop never ran', { everyMs: 20 });
    const second = await raw('count');
    const body = await second.text();
    // Anything else: the loop ended first (its answer may still be on its
    // way), so the try proves nothing; the cap itself is unit-tested.
    if (second.status === 429) {
      assert.match(JSON.parse(body).detail, /^deployment trap runs at most 1 at once \(its limits\.concurrent\); retry shortly$/);
      assert.equal(second.headers.get('retry-after'), '1');
      refused = true;
    }
    const [status, stopped] = await loop;
    assert.equal(status, 422, JSON.stringify(stopped));
  }
  assert.ok(refused, 'no second run came while the loop ran, in five tries');
  // Counted under the deployment (in lower case), by outcome.
  const text = await metrics();
  assert.match(text, /^braid_deployment_runs_total\{deployment="trap",outcome="time"\} [1-9]\d*$/m);
  assert.match(text, /^braid_deployment_runs_total\{deployment="trap",outcome="ok"\} [1-9]\d*$/m);
  assert.match(text, /^braid_deployment_runs_total\{deployment="trap",outcome="refused"\} [1-9]\d*$/m);
  assert.match(text, /^braid_deployment_runs_in_progress\{deployment="trap"\} 0$/m);
});

test('braid deploy: builds a manifest on the service and points a name at it; --rollback points it back', async () => {
  const url = server.url;
  const dir = mkdtempSync(join(tmpdir(), 'braid-deploy-'));
  try {
    // Awaited, not spawnSync: the loop must see the server close idle connections.
    const deploy = (...args) => runCommand(braid, ['deploy', ...args, '--server', url], { env: { ...process.env, BRAID_API_KEY: KEY } });
    const files = {};
    for (const [name, m] of [['trapping', manifest], ['pair', PAIR]]) {
      files[name] = join(dir, `${name}.json`);
      writeFileSync(files[name], JSON.stringify(m));
    }
    assert.match(await deploy('echo', files.trapping), /^echo -> build bafkr4\w+ \(version 1\): POST http:\/\/[0-9.:]+\/v1\/deployments\/echo\/run\n$/);
    assert.match(await deploy('echo', files.pair), /\(version 2\)/);
    assert.match(await deploy('echo', '--rollback', '--time-limit', '250', '--concurrent', '1'), /\(version 3\)/);
    const shown = await (await fetch(`${url}/v1/deployments/echo`)).json();
    assert.deepEqual(shown.limits, { time_ms: 250, concurrent: 1 }, 'budgets set by braid deploy');
    const res = await fetch(`${url}/v1/deployments/echo/run`, {
      method: 'POST',
      body: 'back',
      headers: { 'x-api-key': KEY, 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
    });
    assert.deepEqual([res.status, await res.text()], [200, 'back'], 'the trapping build again, one input echoed');
    // A key that is not this service's moves nothing: the service's 403, said by the CLI.
    await assert.rejects(runCommand(braid, ['deploy', 'echo', '--rollback', '--server', url, '--key', 'wrong']), /the service answered 403: the x-api-key is not valid for this service/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
