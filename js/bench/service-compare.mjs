// Two `braid` binaries' services side by side: the latency of what a
// change to the service's store or routes touches, interleaved in one run
// (medians; the order of the two swapped every round). Each serves its own
// data directory, or its own database with `postgres://USER@HOST:PORT`
// (databases `compare_a` and `compare_b` there, created beforehand), and
// builds `cidv1_from_bytes` (native) once before the rounds.
//
//   git worktree add /tmp/before <commit> && (cd /tmp/before && cargo build --release --bin braid)
//   cargo build --release --bin braid
//   node bench/service-compare.mjs /tmp/before/target/release/braid ../target/release/braid [postgres://...]
//
// Prints JSON: per probe, each binary's median in ms and b / a.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manifest } from '../lib/paths.mjs';
import { spawnServer, waitJob, killHard } from '../lib/server.mjs';
import { stats } from './lib.mjs';

const [a, b, postgres] = process.argv.slice(2);
if (!a || !b) throw new Error('usage: node bench/service-compare.mjs BRAID_A BRAID_B [postgres://USER@HOST:PORT]');
const KEY = 'compare-key';
const ROUNDS = 400;
const WARMUP = 50;
const body = { manifest: { ...manifest('cidv1_from_bytes'), name: 'compare_cached' }, targets: ['native'] };
const post = (url) =>
  fetch(`${url}/v1/workflows`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });

const dir = mkdtempSync(join(tmpdir(), 'braid-compare-'));
const servers = {};
try {
  for (const [name, bin] of Object.entries({ a, b })) {
    const args = ['--workers', '1', ...(postgres ? ['--database', `${postgres}/compare_${name}`] : [])];
    const server = await spawnServer({ bin, dataDir: join(dir, name), key: KEY, args });
    servers[name] = server;
    const first = await post(server.url);
    const submitted = await first.json();
    if (first.status === 202) {
      const job = await waitJob(server.url, submitted.job_id, { key: KEY });
      if (job.state !== 'succeeded') throw new Error(`${name}: ${job.error}`);
    }
    server.build = (await (await post(server.url)).json()).build_id;
  }
  const probes = {
    cached_publish: (s) => post(s.url),
    get_build: (s) => fetch(`${s.url}/v1/builds/${s.build}`),
    get_workflows: (s) => fetch(`${s.url}/v1/workflows`),
  };
  const samples = Object.fromEntries(Object.keys(probes).map((p) => [p, { a: [], b: [] }]));
  for (let i = 0; i < ROUNDS; i++) {
    for (const [probe, request] of Object.entries(probes)) {
      for (const name of i % 2 ? ['a', 'b'] : ['b', 'a']) {
        const start = process.hrtime.bigint();
        const res = await request(servers[name]);
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${probe} on ${name}: ${res.status}`);
        if (i >= WARMUP) samples[probe][name].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
  }
  const round = (x) => Math.round(x * 1000) / 1000;
  const rows = Object.fromEntries(
    Object.entries(samples).map(([probe, { a: xs, b: ys }]) => {
      const [ma, mb] = [stats(xs).median, stats(ys).median];
      return [probe, { a_ms: round(ma), b_ms: round(mb), b_over_a: round(mb / ma) }];
    }),
  );
  console.log(JSON.stringify({ database: postgres ? 'postgres' : 'sqlite', rounds: ROUNDS - WARMUP, ...rows }, null, 1));
} finally {
  for (const server of Object.values(servers)) killHard(server.child);
  rmSync(dir, { recursive: true, force: true });
}
