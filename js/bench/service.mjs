// Benchmarks of the publish service (a real `braid serve` on loopback):
// validate requests per second, latency of a cached POST /v1/workflows,
// and build times through the service: cold (empty cargo target directory)
// and warm (a new workflow over operations already built); and publishing a
// small operation (`braid ops publish`: upload, sandboxed build for native,
// no_std and wasm32, registration) on a warm service, where only the
// operation's own crate compiles.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stats } from './lib.mjs';
import { root, braid, braidSync } from '../lib/paths.mjs';

const KEY = 'bench';
const PUBLISHER = 'bench-publisher';

function start(targetDir) {
  return new Promise((resolve, reject) => {
    const data = mkdtempSync(join(tmpdir(), 'braid-bench-'));
    const child = spawn(braid, ['serve', '--addr', '127.0.0.1:0', '--data', data, '--api-key', KEY, '--publisher-key', PUBLISHER, '--target-dir', targetDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let seen = '';
    child.stderr.on('data', (c) => {
      seen += c;
      const m = seen.match(/listening on (http:\/\/[0-9.:]+)\n/);
      if (m) resolve({ child, base: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`braid serve exited ${code}: ${seen}`)));
  });
}

const manifest = JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8'));
const post = (base, path, body) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });

async function build(base, m, targets) {
  const t = performance.now();
  const r = await (await post(base, '/v1/workflows', { manifest: m, targets })).json();
  for (;;) {
    const job = await (await fetch(`${base}/v1/jobs/${r.job_id}`, { headers: { 'x-api-key': KEY } })).json();
    if (job.state === 'succeeded') break;
    if (job.state === 'failed') throw new Error(job.error);
    await new Promise((res) => setTimeout(res, 100));
  }
  return (performance.now() - t) / 1e3;
}

export async function run({ cold = true } = {}) {
  const results = {};
  const targets = ['native', 'nostd', 'node', 'web', 'bundler'];
  if (cold) {
    const coldDir = mkdtempSync(join(tmpdir(), 'braid-bench-target-'));
    const s = await start(coldDir);
    try {
      results.cold_build_s = await build(s.base, { ...manifest, name: 'bench_cold' }, targets);
    } finally {
      process.kill(-s.child.pid, 'SIGKILL');
    }
  }
  const shared = process.env.BRAID_TARGET_DIR ?? `${root}/target/braid`;
  const { child, base } = await start(shared);
  try {
    await build(base, { ...manifest, name: 'bench_warmup' }, targets);
    results.warm_build_s = await build(base, { ...manifest, name: `bench_warm_${Date.now()}` }, targets);

    // validate: 8 concurrent clients for 3 s.
    const body = JSON.stringify(manifest);
    let count = 0;
    const until = performance.now() + 3000;
    const client = async () => {
      while (performance.now() < until) {
        const r = await fetch(`${base}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await r.arrayBuffer();
        count++;
      }
    };
    const t = performance.now();
    await Promise.all(Array.from({ length: 8 }, client));
    results.validate_rps = count / ((performance.now() - t) / 1000);

    // A cached POST /v1/workflows: answered 200 from the earlier build.
    const lat = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      const r = await post(base, '/v1/workflows', { manifest: { ...manifest, name: 'bench_warmup' }, targets });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
      lat.push((performance.now() - t0) * 1e3);
    }
    results.cached_post_us = stats(lat.slice(50));

    // Publishing: a first operation warms the checks' target directory (the
    // runtime crates); then versions of a second one are timed, end to end.
    const work = mkdtempSync(join(tmpdir(), 'braid-bench-ops-'));
    const publish = (dir) => {
      const t0 = performance.now();
      const r = braidSync(['ops', 'publish', dir, '--server', base, '--key', PUBLISHER]);
      if (r.status !== 0) throw new Error(`braid ops publish: ${r.stderr}`);
      return (performance.now() - t0) / 1e3;
    };
    const scaffold = (name) => {
      const dir = join(work, name);
      const r = braidSync(['new', 'op', name, '-o', dir]);
      if (r.status !== 0) throw new Error(`braid new op: ${r.stderr}`);
      return dir;
    };
    publish(scaffold('op_bench_warmup'));
    const dir = scaffold('op_bench_publish');
    const times = [];
    for (let i = 1; i <= 3; i++) {
      const toml = join(dir, 'Cargo.toml');
      writeFileSync(toml, readFileSync(toml, 'utf8').replace(/^version = ".*"$/m, `version = "0.${i}.0"`));
      times.push(publish(dir));
    }
    results.publish_s = stats(times);
  } finally {
    process.kill(-child.pid, 'SIGKILL');
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
