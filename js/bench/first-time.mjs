// `make bench-first` (and `make bench`): a newcomer's first-time paths
// (issue 31) on this machine, written to bench/first-time.json and
// bench/FIRST.md:
//   1. `braid ops add` of a small operation, just scaffolded by `braid new
//      op`, with a new BRAID_HOME and an empty cargo target directory: the
//      crate built for native, nostd and wasm (what its manifest declares);
//   2. a service's first build of a workflow over built-in operations:
//      `braid serve` on a new data directory and an empty target directory
//      (its sandboxed builds start cold), cidv1_from_bytes submitted for
//      every target it allows, timed from the POST until the job succeeds.
// Cargo's download cache (CARGO_HOME) is kept: a new machine downloads the
// crates once too, and that is the network's time, not Braid's.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { killHard, spawnServer, waitJob } from '../lib/server.mjs';
import { root, braidSync } from '../lib/paths.mjs';

const KEY = 'bench-key';
const round = (x) => Math.round(x * 10) / 10;
const seconds = (start) => round(Number(process.hrtime.bigint() - start) / 1e9);

/** What the first user measured before (issue 31), and the targets. */
const PREVIOUS = { ops_add_s: 240, service_first_build_s: 404 };
const TARGETS = { ops_add_s: 60, service_first_build_s: 90 };

function opsAdd(dir) {
  const env = { ...process.env, BRAID_HOME: join(dir, 'home') };
  const op = join(dir, 'op_first');
  const scaffold = braidSync(['new', 'op', 'op_first', '-o', op], { env });
  if (scaffold.status !== 0) throw new Error(`braid new op: ${scaffold.stderr}`);
  const start = process.hrtime.bigint();
  const add = braidSync(['ops', 'add', op, '--target-dir', join(dir, 'ops-target')], { env });
  const s = seconds(start);
  if (add.status !== 0) throw new Error(`braid ops add: ${add.stderr}`);
  console.error(`bench-first: braid ops add, cold: ${s} s`);
  return s;
}

async function serviceFirstBuild(dir) {
  const server = await spawnServer({ dataDir: join(dir, 'data'), key: KEY, args: ['--target-dir', join(dir, 'service-target')] });
  try {
    const manifest = JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8'));
    const start = process.hrtime.bigint();
    const res = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ manifest }),
    });
    if (res.status !== 202) throw new Error(`POST /v1/workflows: ${res.status} ${await res.text()}`);
    const job = await waitJob(server.url, (await res.json()).job_id, { key: KEY, timeoutMs: 1_800_000 });
    const s = seconds(start);
    if (job.state !== 'succeeded') throw new Error(`the first build failed: ${job.error}\n${server.log()}`);
    const build = await (await fetch(`${server.url}/v1/builds/${job.build_id}`)).json();
    const steps = Object.entries(build.timings_ms ?? {}).map(([step, ms]) => `${step} ${round(ms / 1000)} s`);
    console.error(`bench-first: the service's first build, cold: ${s} s (${steps.join(', ')})`);
    return s;
  } finally {
    killHard(server.child);
  }
}

const dir = mkdtempSync(join(os.tmpdir(), 'braid-first-'));
try {
  const measured = { ops_add_s: opsAdd(dir), service_first_build_s: await serviceFirstBuild(dir) };
  const result = { when: new Date().toISOString(), cores: os.cpus().length, measured, previous: PREVIOUS, targets: TARGETS };
  writeFileSync(`${root}/bench/first-time.json`, `${JSON.stringify(result, null, 2)}\n`);
  const row = (what, key) =>
    `| ${what} | ${measured[key]} | ≤ ${TARGETS[key]} | ${PREVIOUS[key]} | ${measured[key] <= TARGETS[key] ? 'met' : 'missed'} |`;
  writeFileSync(
    `${root}/bench/FIRST.md`,
    `# A newcomer's first-time paths

Measured by \`make bench-first\` (js/bench/first-time.mjs) on ${result.cores} cores, ${result.when}. Cold: a new
\`BRAID_HOME\`, new data directory and empty cargo target directories; cargo's download cache kept.
"Before" is what the first user measured (issue 31).

| path | seconds | target | before | |
|---|---|---|---|---|
${row('`braid ops add` of a just-scaffolded operation (native, nostd, wasm)', 'ops_add_s')}
${row("the service's first build of cidv1_from_bytes (every target it allows)", 'service_first_build_s')}
`,
  );
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
