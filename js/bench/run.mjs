// `make bench-run` (and `make bench`): the run endpoint's numbers, written
// to bench/run.json and bench/RUN.md. The servers on loopback, side by
// side in one run, each given the same requests by oha:
//   1. braid: `braid serve` (the perf profile) running the workflow's
//      component, a fresh instance per request, with an API key, by
//      workflow id (POST /v1/workflows/{id}/run: the build found per
//      request) and pinned (braid_build: POST /v1/builds/{id}/run);
//   2. node: a `node:http` server calling the workflow's npm package
//      (run-node-server.mjs), what a JS user writes today;
//   3. floor: the same HTTP stack as braid (axum, hyper, tokio) calling the
//      generated crate natively in process, no isolation (bench/floor);
//   4. wasmtime: `wasmtime serve` (of the engine's LTS line) running a
//      hand-written wasi:http component of the same computation
//      (bench/wasi-http-cid; bench/wasi-http-photo, which calls the
//      operation crates itself), the same isolation: a fresh instance per
//      request, the pooling allocator, a 1 s timeout;
//   5. wasmtime_http: `wasmtime serve`, the same way, running the workflow's
//      generated HTTP function (`braid build --targets http`), every workload;
//   6. jco_http: `jco serve` (npm @bytecodealliance/jco) running it, as it
//      comes.
// Workloads: cidv1_from_bytes on 64 B and 16 KiB, photo_proof on a 0.3 MP
// JPEG. Saturation: requests per second at 16 connections, three rounds
// with the servers interleaved, the median. Latency: p50/p95/p99 at a
// fixed rate, half of braid's saturation rate, each server in turn. Also:
// instantiation per request (Server-Timing, measured inside), RSS, the
// first run after a build and the first after a restart.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { photo } from './images.mjs';
import { isDeepStrictEqual } from 'node:util';
import { stats } from './lib.mjs';
import { root, wfOut } from '../lib/paths.mjs';

const braid = process.env.BRAID_PERF_BIN ?? `${root}/target/perf/braid`;
// braid-engine's `runs` example: the executor alone, in process, back to back.
const engineRuns = process.env.BRAID_ENGINE_RUNS ?? `${root}/target/perf/examples/runs`;
const oha = process.env.BRAID_OHA ?? `${root}/target/tools/bin/oha`;
const wasmtime = process.env.BRAID_WASMTIME ?? 'wasmtime';
const jco = `${root}/js/node_modules/.bin/jco`;
// The hand-written wasi:http components, by workflow (built by make bench-run).
const handWritten = {
  cidv1_from_bytes: `${root}/target/bench/wasi-http-cid/wasm32-wasip2/release/braid_bench_wasi_http_cid.wasm`,
  photo_proof: `${root}/target/bench/wasi-http-photo/wasm32-wasip2/release/braid_bench_wasi_http_photo.wasm`,
};
const KEY = 'bench-key';
const SECONDS = Number(process.env.BRAID_RUN_SECONDS ?? 4);
const ROUNDS = 3;
const CONNECTIONS = 16;
const round = (x, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** Spawns `cmd args` in its own group; resolves to { child, url } once it prints `ready` (`listening on URL`; group 1 the URL). */
function start(cmd, args, ready = /listening on (http:\/\/[0-9.:]+)\n/) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let seen = '';
    const look = (c) => {
      seen += c;
      const m = seen.match(ready);
      if (m) resolve({ child, url: m[1].replace(/\/$/, '') });
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`${cmd} exited ${code}: ${seen}`)));
  });
}
const stop = (p) => {
  try {
    process.kill(-p.child.pid, 'SIGKILL');
  } catch {}
};

/** Resident memory of a process (MiB): now and its peak. */
function rss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]);
  return { rss_mib: round(kib('VmRSS') / 1024), peak_mib: round(kib('VmHWM') / 1024) };
}

/** CPU time (user, kernel, in clock ticks) and page faults of a process so far. */
function usage(pid) {
  // Fields after the command's `)`: state is 3rd, minflt 10th, majflt 12th, utime 14th, stime 15th.
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { minflt: Number(f[7]), majflt: Number(f[9]), utime: Number(f[11]), stime: Number(f[12]) };
}
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * oha against `url` with the body in `file` (`headers` added): { rps, p50_ms,
 * p95_ms, p99_ms, ok (the share of 200s) }, and with `pid` the server's cost
 * a request: CPU µs (user, kernel), page faults, and the cores it used.
 */
function load(url, file, { rate, headers = {}, pid } = {}) {
  const args = ['--no-tui', '--output-format', 'json', '-z', `${SECONDS}s`, '-c', String(CONNECTIONS), '-m', 'POST', '-D', file,
    '-H', 'content-type: application/octet-stream', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  if (rate) args.push('-q', String(rate), '--latency-correction');
  const before = pid && usage(pid);
  const out = JSON.parse(execFileSync(oha, args, { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const after = pid && usage(pid);
  const statuses = out.statusCodeDistribution ?? {};
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  const p = out.latencyPercentiles;
  const cost = pid && total ? {
    user_us: round(((after.utime - before.utime) / TICKS / total) * 1e6),
    kernel_us: round(((after.stime - before.stime) / TICKS / total) * 1e6),
    faults: round((after.minflt - before.minflt + after.majflt - before.majflt) / total, 2),
    cores: round((after.utime - before.utime + after.stime - before.stime) / TICKS / out.summary.total, 2),
  } : undefined;
  return {
    rps: round(out.summary.requestsPerSec, 0),
    p50_ms: round(p.p50 * 1e3, 3),
    p95_ms: round(p.p95 * 1e3, 3),
    p99_ms: round(p.p99 * 1e3, 3),
    ok: total ? round((statuses['200'] ?? 0) / total, 4) : 0,
    ...(cost && { cost }),
  };
}

/** A free loopback port. */
const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

/** Submits workflow `name` for the component and http targets to braid; the build and workflow ids. */
async function build(url, name) {
  const manifest = JSON.parse(readFileSync(`${root}/workflows/${name}.json`, 'utf8'));
  const post = await fetch(`${url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ manifest, targets: ['component', 'http'] }),
  });
  const submitted = await post.json();
  if (post.status !== 202 && post.status !== 200) throw new Error(`${name}: ${JSON.stringify(submitted)}`);
  for (;;) {
    const job = await (await fetch(`${url}/v1/jobs/${submitted.job_id}`, { headers: { 'x-api-key': KEY } })).json();
    if (job.state === 'succeeded') return { build: submitted.build_id, workflow: submitted.workflow_id };
    if (job.state === 'failed') throw new Error(`${name}: ${job.error}\n${job.log_tail}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One request's wall time (ms) and its Server-Timing (inst, run) in ms. */
async function once(url, body) {
  const t = process.hrtime.bigint();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': KEY }, body });
  const text = await res.text();
  const wall = ms(t);
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  const timing = res.headers.get('server-timing') ?? '';
  const num = (name) => Number(new RegExp(`${name};dur=([0-9.]+)`).exec(timing)?.[1]);
  return { wall, inst: num('inst'), run: num('run'), text };
}

const workloads = [
  { id: 'cid_64B', workflow: 'cidv1_from_bytes', body: () => new Uint8Array(64).map((_, i) => (i * 31 + 7) & 255) },
  { id: 'cid_16KiB', workflow: 'cidv1_from_bytes', body: () => new Uint8Array(16 << 10).map((_, i) => (i * 31 + 7) & 255) },
  { id: 'photo_0.3MP', workflow: 'photo_proof', body: () => photo('0.3MP') },
];

const dir = mkdtempSync(join(os.tmpdir(), 'braid-bench-run-'));
const data = join(dir, 'data');
// Runs with a key, as a deployment's are (no --public-run).
const serveArgs = ['serve', '--addr', '127.0.0.1:0', '--data', data, '--api-key', KEY, '--run-queue', '1024',
  '--max-connections-per-client', '1024'];
const keyed = { 'x-api-key': KEY };
const servers = {};
const results = { when: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
  settings: { seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS }, workloads: {} };
try {
  servers.braid = await start(braid, serveArgs);
  const builds = {};
  const first = {};
  for (const name of [...new Set(workloads.map((w) => w.workflow))]) {
    builds[name] = await build(servers.braid.url, name);
    const w = workloads.find((x) => x.workflow === name);
    first[name] = { after_build: (await once(`${servers.braid.url}/v1/builds/${builds[name].build}/run`, w.body())).wall };
  }
  // The first run after a restart: the component loaded precompiled from <data>/precompiled.
  stop(servers.braid);
  servers.braid = await start(braid, serveArgs);
  for (const name of Object.keys(builds)) {
    const w = workloads.find((x) => x.workflow === name);
    first[name].after_restart = (await once(`${servers.braid.url}/v1/builds/${builds[name].build}/run`, w.body())).wall;
  }
  for (const w of workloads) {
    const file = join(dir, `${w.id}.bin`);
    writeFileSync(file, w.body());
    const pkg = `${wfOut}/${w.workflow}/pkg/node/wf_${w.workflow}.js`;
    servers.node = await start(process.execPath, [fileURLToPath(new URL('run-node-server.mjs', import.meta.url)), pkg]);
    servers.floor = await start(`${root}/target/bench/floor/release/floor-${w.workflow}`, []);
    const urls = {
      braid: `${servers.braid.url}/v1/workflows/${builds[w.workflow].workflow}/run`,
      braid_build: `${servers.braid.url}/v1/builds/${builds[w.workflow].build}/run`,
      node: `${servers.node.url}/run`,
      floor: `${servers.floor.url}/run`,
    };
    // The service's own artifacts of the build: its component, and its
    // HTTP function (`--targets http`).
    const auth = { headers: keyed };
    const build = await (await fetch(`${servers.braid.url}/v1/builds/${builds[w.workflow].build}`, auth)).json();
    const artifact = async (suffix) => {
      const found = build.artifacts.find((a) => a.name.endsWith(suffix));
      const path = join(dir, `${w.workflow}${suffix}`);
      writeFileSync(path, Buffer.from(await (await fetch(`${servers.braid.url}/v1/artifacts/${found.cid}`, auth)).arrayBuffer()));
      return path;
    };
    const wasm = await artifact('.component.wasm');
    const httpWasm = await artifact('.http.wasm');
    // wasmtime serve: a fresh instance per request (its way), the pooling
    // allocator, 1 s per request, as braid's defaults; the hand-written
    // component and the generated HTTP function.
    const wasmtimeServe = async (component, flags = []) => {
      const port = await freePort();
      return start(wasmtime, ['serve', '--addr', `127.0.0.1:${port}`, '-O', 'pooling-allocator=y', '-W', 'timeout=1s',
        ...flags, component], /Serving HTTP on (http:\/\/[0-9.:]+)\/?\s/);
    };
    if (handWritten[w.workflow]) {
      servers.wasmtime = await wasmtimeServe(handWritten[w.workflow], ['-S', 'cli=y']);
      urls.wasmtime = `${servers.wasmtime.url}/`;
    }
    servers.wasmtime_http = await wasmtimeServe(httpWasm);
    urls.wasmtime_http = `${servers.wasmtime_http.url}/`;
    // jco serve as it comes (the component transpiled to JS, in Node).
    const jcoPort = await freePort();
    servers.jco_http = await start(jco, ['serve', '--host', '127.0.0.1', '--port', String(jcoPort), httpWasm], /(Server listening) @/);
    servers.jco_http.url = `http://127.0.0.1:${jcoPort}`;
    urls.jco_http = `${servers.jco_http.url}/`;
    const names = Object.keys(urls);
    const processOf = (s) => (s === 'braid_build' ? servers.braid : servers[s]);
    // The same answer from every server.
    const answers = await Promise.all(Object.values(urls).map(async (u) => JSON.parse((await once(u, w.body())).text)));
    for (const a of answers.slice(1)) {
      if (!isDeepStrictEqual(a, answers[0])) throw new Error(`${w.id}: the servers disagree: ${JSON.stringify(answers)}`);
    }
    // The executor alone on the service's own component: instantiation and run, back to back.
    const alone = JSON.parse(execFileSync(engineRuns, [wasm, file, w.workflow === 'photo_proof' ? '200' : '5000', '--json'], { encoding: 'utf8' }));
    // Inside braid: 200 sequential requests, Server-Timing's instantiation and run.
    const inside = [];
    for (let i = 0; i < 200; i++) inside.push(await once(urls.braid, w.body()));
    const saturation = Object.fromEntries(names.map((n) => [n, []]));
    const measure = (s, options = {}) => load(urls[s], file, { headers: keyed, pid: processOf(s).child.pid, ...options });
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? [...names].reverse() : names;
      for (const s of order) saturation[s].push(measure(s));
    }
    const median = (runs, key) => stats(runs.map((x) => x[key])).median;
    const costs = (runs) => Object.fromEntries(['user_us', 'kernel_us', 'faults', 'cores'].map((k) => [k, stats(runs.map((x) => x.cost[k])).median]));
    // Half of what the slower of braid and wasmtime serve sustains: the
    // latencies are compared at a rate both can carry.
    const rate = Math.max(1, Math.round(Math.min(...['braid', 'wasmtime'].filter((n) => saturation[n]).map((n) => median(saturation[n], 'rps'))) / 2));
    const row = { workflow: w.workflow, bytes: readFileSync(file).length, half_rate: rate, servers: {} };
    for (const s of names) {
      const fixed = measure(s, { rate });
      row.servers[s] = {
        rps: median(saturation[s], 'rps'),
        rps_runs: saturation[s].map((x) => x.rps),
        ok: Math.min(...saturation[s].map((x) => x.ok), fixed.ok),
        // The server's own cost a request at saturation (the medians of the rounds).
        cost: costs(saturation[s]),
        at_half_rate: fixed,
        // Resident after the bursts above.
        ...rss(processOf(s).child.pid),
      };
    }
    row.inside = {
      inst_us_median: round(stats(inside.map((x) => x.inst)).median * 1e3),
      run_us_median: round(stats(inside.map((x) => x.run)).median * 1e3),
      wall_ms_median: round(stats(inside.map((x) => x.wall)).median, 3),
      engine_inst_us_median: alone.instantiate_us,
      engine_run_us_median: alone.total_us,
    };
    row.first_run_ms = { after_build: round(first[w.workflow].after_build, 1), after_restart: round(first[w.workflow].after_restart, 1) };
    row.ratios = {
      braid_over_floor: round(row.servers.braid.rps / row.servers.floor.rps, 2),
      braid_over_node: round(row.servers.braid.rps / row.servers.node.rps, 2),
      ...(row.servers.wasmtime && {
        braid_over_wasmtime: round(row.servers.braid.rps / row.servers.wasmtime.rps, 2),
        braid_build_over_wasmtime: round(row.servers.braid_build.rps / row.servers.wasmtime.rps, 2),
        // The generated HTTP function against the hand-written one, both
        // under wasmtime serve (issue target: at least 0.9).
        http_over_handwritten: round(row.servers.wasmtime_http.rps / row.servers.wasmtime.rps, 2),
      }),
      braid_over_wasmtime_http: round(row.servers.braid.rps / row.servers.wasmtime_http.rps, 2),
      braid_over_jco_http: round(row.servers.braid.rps / row.servers.jco_http.rps, 2),
    };
    results.workloads[w.id] = row;
    for (const s of ['node', 'floor', 'wasmtime', 'wasmtime_http', 'jco_http']) {
      if (servers[s]) stop(servers[s]);
      delete servers[s];
    }
    console.log(w.id, JSON.stringify(row));
  }
} finally {
  for (const s of Object.values(servers)) stop(s);
  rmSync(dir, { recursive: true, force: true });
}

writeFileSync(`${root}/bench/run.json`, `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(`${root}/bench/RUN.md`, report(results));
console.log(report(results));

function report(r) {
  const yes = (ok) => (ok ? 'met' : '**missed**');
  const lines = [
    '# The run endpoint (`make bench-run`)',
    '',
    `${r.when}, ${r.machine.cpus} cores (${r.machine.model}), Node ${r.machine.node}; oha, ${r.settings.connections} connections,`,
    `${r.settings.seconds} s per measurement; saturation: the median of ${r.settings.rounds} rounds, the servers interleaved.`,
    'braid: `braid serve` (perf profile), a fresh component instance per request, with an API key, by workflow id;',
    'braid_build: the same, pinned to the build; node: `node:http` + the npm package; floor: axum/hyper/tokio + the',
    'generated crate, native, in process; wasmtime: `wasmtime serve` (the engine\'s LTS line, pooling allocator, 1 s timeout)',
    'on a hand-written wasi:http component of the same computation (bench/wasi-http-cid, bench/wasi-http-photo); wasmtime_http: `wasmtime serve` the same',
    'way on the workflow\'s generated HTTP function (`--targets http`); jco_http: `jco serve` on it, as it comes (one',
    'instance in Node). Written by js/bench/run.mjs.',
    '',
    '| workload | server | req/s (saturation) | p50 / p95 / p99 ms at half of the slower of braid and wasmtime | CPU µs a request (user + kernel) | page faults a request | cores used | RSS MiB after (peak) |',
    '|---|---|---:|---|---:|---:|---:|---:|',
  ];
  for (const [id, row] of Object.entries(r.workloads)) {
    for (const [s, v] of Object.entries(row.servers)) {
      const f = v.at_half_rate;
      const c = v.cost ?? {};
      lines.push(`| ${id} | ${s} | ${v.rps} | ${f.p50_ms} / ${f.p95_ms} / ${f.p99_ms} (at ${row.half_rate}/s) | ${c.user_us} + ${c.kernel_us} | ${c.faults} | ${c.cores} | ${v.rss_mib} (${v.peak_mib}) |`);
    }
  }
  lines.push('', '| workload | braid / wasmtime req/s (target ≥ 1.0) | braid_build / wasmtime req/s (target ≥ 1.0) | p99 at half load, braid / braid_build / wasmtime ms (target: no higher) |', '|---|---|---|---|');
  for (const [id, row] of Object.entries(r.workloads)) {
    if (!row.servers.wasmtime) continue;
    const p99 = (s) => row.servers[s].at_half_rate.p99_ms;
    const wt = p99('wasmtime');
    lines.push(`| ${id} | ${row.ratios.braid_over_wasmtime} (${yes(row.ratios.braid_over_wasmtime >= 1)}) | ${row.ratios.braid_build_over_wasmtime} (${yes(row.ratios.braid_build_over_wasmtime >= 1)}) | ${p99('braid')} / ${p99('braid_build')} / ${wt} (${yes(p99('braid') <= wt && p99('braid_build') <= wt)}) |`);
  }
  lines.push('', '| workload | generated / hand-written HTTP function under wasmtime serve, req/s (target ≥ 0.9) | p99 at half load, generated / hand-written ms | braid / wasmtime_http req/s | braid / jco_http req/s |', '|---|---|---|---|---|');
  for (const [id, row] of Object.entries(r.workloads)) {
    const ratio = row.ratios.http_over_handwritten;
    const p99 = (s) => row.servers[s]?.at_half_rate.p99_ms ?? '-';
    const target = ratio === undefined ? 'no hand-written one' : `${ratio} (${yes(ratio >= 0.9)})`;
    lines.push(`| ${id} | ${target} | ${p99('wasmtime_http')} / ${p99('wasmtime')} | ${row.ratios.braid_over_wasmtime_http} | ${row.ratios.braid_over_jco_http} |`);
  }
  lines.push('', '| workload | braid / floor req/s (target ≥ 0.7) | braid / node req/s (target ≥ 2) | braid p99 at half load (target ≤ 1 ms) | instantiation µs, median (target ≤ 20): executor / over HTTP | run µs, median: executor / over HTTP | first run after build / after restart ms (target ≤ 10 after restart) |', '|---|---|---|---|---|---|---|');
  for (const [id, row] of Object.entries(r.workloads)) {
    const b = row.servers.braid;
    const i = row.inside;
    lines.push(`| ${id} | ${row.ratios.braid_over_floor} (${yes(row.ratios.braid_over_floor >= 0.7)}) | ${row.ratios.braid_over_node} (${yes(row.ratios.braid_over_node >= 2)}) | ${b.at_half_rate.p99_ms} (${yes(b.at_half_rate.p99_ms <= 1)}) | ${i.engine_inst_us_median} (${yes(i.engine_inst_us_median <= 20)}) / ${i.inst_us_median} | ${i.engine_run_us_median} / ${i.run_us_median} | ${row.first_run_ms.after_build} / ${row.first_run_ms.after_restart} (${yes(row.first_run_ms.after_restart <= 10)}) |`);
  }
  lines.push('', 'Instantiation and run, "executor": braid-engine alone on the service\'s component, in process, back to back',
    '(`cargo run --profile perf -p braid-engine --example runs`); "over HTTP": Server-Timing of 200 sequential requests,',
    'each woken on an idle server (the target is judged on the first).');
  lines.push('', 'The seeds, for comparison: Shopify Scripts\' runtime p50 10.9 ms, p95 17.3 ms, with a goal of p95 under 5 ms;',
    'Shopify Functions run under an 11 M instruction budget with 128 KB of input and a 256 KB module cap.', '');
  return lines.join('\n');
}
