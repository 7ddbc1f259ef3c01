// `make bench-cluster` (and `make bench`): the deployment's numbers on this
// machine, written to bench/cluster.json and bench/CLUSTER.md.
//   1. Builds per minute with 1, 2 and 3 workers (PostgreSQL, Garage, one API).
//   2. A fresh worker's first build (an empty target directory): no compile
//      cache, the shared cache cold, the shared cache warm.
//   3. The API's cached-publish latency (POST /v1/workflows of a built
//      workflow): SQLite, PostgreSQL, PostgreSQL with the S3 store; the
//      servers side by side, requests interleaved.
// A 2-core machine saturates with one build: the numbers say where the time
// goes rather than how a larger deployment scales.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Deployment, pg } from '../lib/cluster.mjs';
import { root, braidSync } from '../lib/paths.mjs';
import { waitJob } from '../lib/server.mjs';
import { stats } from './lib.mjs';

const KEY = 'bench-key';
const manifest = (name) => ({ ...JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8')), name });
const post = (url, body) =>
  fetch(`${url}/v1/workflows`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const round = (x, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Submits `names` (native and node) to `api`, waits for every job; the wall time and each build's step timings. */
async function buildAll(api, names) {
  const start = process.hrtime.bigint();
  const jobs = await Promise.all(
    names.map(async (name) => {
      const res = await post(api.url, { manifest: manifest(name), targets: ['native', 'node'] });
      if (res.status !== 202) throw new Error(`${name}: ${res.status} ${await res.text()}`);
      return res.json();
    }),
  );
  const steps = {};
  for (const { job_id, build_id } of jobs) {
    const job = await waitJob(api.url, job_id, { key: KEY, timeoutMs: 1_800_000 });
    if (job.state !== 'succeeded') throw new Error(`${job.error}\n${job.log_tail}`);
    const build = await (await fetch(`${api.url}/v1/builds/${build_id}`)).json();
    for (const [step, t] of Object.entries(build.timings_ms ?? {})) (steps[step] ??= []).push(t);
  }
  const wall = ms(start);
  return { wall_ms: round(wall, 0), builds: names.length, per_minute: round((names.length * 60_000) / wall, 2), step_median_ms: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, stats(v).median])) };
}

async function throughput(d) {
  const api = await d.api('tp-api', KEY, [...d.shared(), '--workers', '0']);
  // Warm: the shared target directory has every dependency compiled.
  const warm = await d.worker('tp-warm', ['--workers', '1']);
  await buildAll(api, ['bench_warm']);
  d.kill(warm);
  const rows = {};
  for (const n of [1, 2, 3]) {
    const workers = await Promise.all(Array.from({ length: n }, (_, i) => d.worker(`tp-${n}-${i}`, ['--workers', '1'])));
    rows[n] = await buildAll(api, Array.from({ length: 6 }, (_, i) => `bench_w${n}_${i}`));
    console.error(`bench-cluster: ${n} worker(s): ${rows[n].per_minute} builds/min`);
    for (const w of workers) d.kill(w);
  }
  d.kill(api);
  return rows;
}

/** `braid build` into an empty target directory (always the same path, as on a fresh host). */
function firstBuild(d, label, cache) {
  const target = join(d.dir, 'fresh-target');
  rmSync(target, { recursive: true, force: true });
  const endpoint = new URL(d.store.replace(/^s3:/, 'http:')).searchParams.get('endpoint').split(',')[0];
  const env = {
    ...process.env,
    ...d.credentials,
    SCCACHE_BUCKET: 'braid',
    SCCACHE_ENDPOINT: endpoint,
    SCCACHE_REGION: 'garage',
    SCCACHE_S3_USE_SSL: 'false',
    SCCACHE_S3_KEY_PREFIX: `sccache-${cache}/`,
  };
  const args = ['build', `${root}/workflows/cidv1_from_bytes.json`, '-o', join(d.dir, `fresh-${label}`), '--targets', 'native,node', '--target-dir', target, '--sandbox'];
  if (cache !== 'none') args.push('--compile-cache');
  const start = process.hrtime.bigint();
  const run = braidSync(args, { env });
  const wall = ms(start);
  if (run.status !== 0) throw new Error(`braid build (${label}): ${run.stderr}`);
  console.error(`bench-cluster: first build, ${label}: ${round(wall / 1000)} s`);
  return round(wall / 1000);
}

function compileCache(d) {
  // The cache prefix `sccache-shared/` starts empty: the first build fills it (cold), the second finds it (warm).
  return { none_s: firstBuild(d, 'no cache', 'none'), cold_s: firstBuild(d, 'cache cold', 'shared'), warm_s: firstBuild(d, 'cache warm', 'shared') };
}

async function latency(d) {
  // Its own database: the two PostgreSQL servers keep their artifacts in different stores.
  const ofDir = pg('start', d.pgDir, String(d.pgPort), 'braid_dir');
  const servers = {
    sqlite: await d.api('lat-sqlite', KEY, ['--workers', '1']),
    postgres: await d.api('lat-pg', KEY, ['--database', ofDir, '--store', join(d.dir, 'lat-artifacts'), '--workers', '1']),
    postgres_s3: await d.api('lat-pg-s3', KEY, [...d.shared(), '--workers', '1']),
  };
  const body = { manifest: manifest('bench_cached'), targets: ['native'] };
  for (const api of Object.values(servers)) {
    const first = await post(api.url, body);
    if (first.status === 202) await waitJob(api.url, (await first.json()).job_id, { key: KEY, timeoutMs: 1_800_000 });
  }
  const samples = Object.fromEntries(Object.keys(servers).map((k) => [k, []]));
  for (let i = 0; i < 300; i++) {
    for (const [k, api] of Object.entries(servers)) {
      const start = process.hrtime.bigint();
      const res = await post(api.url, body);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${k}: ${res.status}`);
      if (i >= 20) samples[k].push(ms(start));
    }
  }
  for (const api of Object.values(servers)) d.kill(api);
  const rows = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, { median_ms: round(stats(xs).median, 2), p95_ms: round(xs.sort((a, b) => a - b)[Math.floor(xs.length * 0.95)], 2) }]));
  rows.ratio_postgres_to_sqlite = round(rows.postgres.median_ms / rows.sqlite.median_ms, 2);
  rows.ratio_postgres_s3_to_sqlite = round(rows.postgres_s3.median_ms / rows.sqlite.median_ms, 2);
  return rows;
}

// `node bench/cluster.mjs [latency] [throughput] [first_build]`: those parts
// only, the others kept from the last run's bench/cluster.json.
const parts = { latency, throughput, first_build: compileCache };
const chosen = process.argv.slice(2);
for (const p of chosen) if (!(p in parts)) throw new Error(`unknown part ${p}; expected one of ${Object.keys(parts).join(', ')}`);
const d = new Deployment('braid-bench-cluster-');
try {
  await d.backends();
  let results = {};
  if (chosen.length) results = JSON.parse(readFileSync(`${root}/bench/cluster.json`, 'utf8'));
  const started = new Date().toISOString();
  delete results.when;
  results.machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model };
  for (const [name, run] of Object.entries(parts)) {
    if (!chosen.length || chosen.includes(name)) {
      results[name] = await run(d);
      (results.measured ??= {})[name] = `run started ${started}`;
    }
  }
  writeFileSync(`${root}/bench/cluster.json`, JSON.stringify(results, null, 2) + '\n');
  writeFileSync(`${root}/bench/CLUSTER.md`, report(results));
  console.error('bench-cluster: wrote bench/cluster.json and bench/CLUSTER.md');
} finally {
  d.close();
}

function report({ measured, machine, latency: l, throughput: t, first_build: f }) {
  const steps = [...new Set(Object.values(t).flatMap((r) => Object.keys(r.step_median_ms)))];
  return `# A deployment on one machine: numbers

Measured on ${machine.cpus} cores (${machine.model}) by \`make bench-cluster\`
(js/bench/cluster.mjs): PostgreSQL, a three-node Garage (replication 3) and
Braid processes on loopback. Medians. When: ${Object.entries(measured)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}.

## Builds per minute

Six distinct workflows (native and node targets), submitted at once to one
API; workers share one warm cargo target directory.

| workers | builds/min | wall (s) | ${steps.map((s) => `${s} (ms)`).join(' | ')} |
|---|---|---|${steps.map(() => '---|').join('')}
${Object.entries(t)
  .map(([n, r]) => `| ${n} | ${r.per_minute} | ${round(r.wall_ms / 1000)} | ${steps.map((s) => r.step_median_ms[s] ?? '').join(' | ')} |`)
  .join('\n')}

Each build compiles its own crate (the rest is warm): cargo's lock on the
shared target directory lets one compile run at a time, and on ${machine.cpus}
cores one compile already takes the machine. More workers overlap only the
steps outside cargo (wasm-bindgen, wasm-opt, packing, uploads), and each
step takes longer when they do: the per-step medians above show where the
time goes. Workers on separate hosts, each with its own target directory,
do not share that lock or those cores.

## A fresh worker's first build

\`braid build --sandbox\` of cidv1_from_bytes (native, node) into an empty
target directory at the same path, as on a new host:

| compile cache | seconds |
|---|---|
| none | ${f.none_s} |
| sccache on the S3 store, cold (filling it) | ${f.cold_s} |
| sccache on the S3 store, warm | ${f.warm_s} |

Warm versus none: ×${round(f.none_s / f.warm_s, 2)} faster. sccache serves
the dependencies' libraries; build scripts, proc-macros and the workflow's
own crate compile every time (sccache cannot cache them).

## Cached-publish latency

\`POST /v1/workflows\` of a workflow already built (200 with its artifacts,
each read back and verified), 280 requests per server after 20 of warm-up,
the servers side by side and the requests interleaved:

| backend | median (ms) | p95 (ms) |
|---|---|---|
| SQLite, artifacts in a directory (the embedded default) | ${l.sqlite.median_ms} | ${l.sqlite.p95_ms} |
| PostgreSQL, artifacts in a directory | ${l.postgres.median_ms} | ${l.postgres.p95_ms} |
| PostgreSQL, artifacts in Garage (S3) | ${l.postgres_s3.median_ms} | ${l.postgres_s3.p95_ms} |

PostgreSQL / SQLite: ×${l.ratio_postgres_to_sqlite}; PostgreSQL with S3 / SQLite: ×${l.ratio_postgres_s3_to_sqlite}.
The database costs little; the store costs the rest: a cached publish
reads every artifact of the build back and checks it (all at once), and
a read from Garage on loopback takes 2 to 45 ms (its answers stall on
delayed acknowledgements, as \`curl\` sees too), where a file takes
well under one.
`;
}
