// The Node comparison of workflows.mjs, in headless Chromium: the fused
// workflow's pkg/web, the floor and serde baselines (wasm-pack --target web),
// the operation packages' web builds and pure JS (bundled by esbuild), timed
// in the page, interleaved in rounds.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, inChromium } from './lib.mjs';
import { root, wfOut as wfDir, opPkgs as opsDir } from '../lib/paths.mjs';


const PAGE = `
import initWf, * as wf from '/wf/wf_cidv1_from_bytes.js';
import initMh, * as mh from '/mh/op_multihash.js';
import initCid, * as cid from '/cid/op_cid.js';
import initBase, * as base from '/base/braid_bench_baselines.js';
import { cid as pureJs } from '/app/reference.js';
const input = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 0xff; return b; };
const stats = (s) => { s.sort((a, b) => a - b); const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))]; return { median: q(0.5), p10: q(0.1), p90: q(0.9), n: s.length }; };
try {
  await Promise.all([initWf(), initMh(), initCid(), initBase()]);
  const out = {};
  for (const [label, size] of [['16KiB', 16384], ['64KiB', 65536], ['800KiB', 819200]]) {
    const bytes = input(size);
    const expected = base.cid_floor(bytes);
    if ((await wf.run([bytes])) !== expected || pureJs(bytes) !== expected) throw new Error('outputs disagree');
    const variants = {
      floor: () => base.cid_floor(bytes),
      fused_run: () => wf.run([bytes]),
      fused_run_sync: () => wf.runSync([bytes]),
      fused_next: () => new wf.Workflow().next([bytes]),
      chained_ops: () => cid.executeSync(mh.executeSync(bytes)),
      chained_ops_async: async () => cid.execute(await mh.execute(bytes)),
      serde_wasm_bindgen: () => base.cid_serde_wasm_bindgen(bytes),
      serde_json: () => JSON.parse(base.cid_serde_json(JSON.stringify(Array.from(bytes)))),
      pure_js: () => pureJs(bytes),
    };
    // performance.now() is coarse in a page (100 us without cross-origin
    // isolation), so each sample is a batch of calls lasting about 10 ms.
    const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
    const batch = {};
    for (const [k, fn] of Object.entries(variants)) {
      const start = performance.now();
      let calls = 0;
      while (performance.now() - start < 300) { await fn(); calls++; }
      batch[k] = Math.max(1, Math.ceil(10 / ((performance.now() - start) / calls)));
    }
    for (let r = 0; r < 5; r++) for (const [k, fn] of Object.entries(variants)) for (let b = 0; b < 3; b++) {
      const t = performance.now();
      for (let i = 0; i < batch[k]; i++) await fn();
      samples[k].push(((performance.now() - t) * 1e3) / batch[k]);
    }
    const row = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
    for (const r of Object.values(row)) r.ratio_to_floor = r.median / row.floor.median;
    out[label] = row;
  }
  window.result = { sizes: out, userAgent: navigator.userAgent };
} catch (e) { window.result = { error: String(e.stack || e) }; }
`;

export async function run() {
  const app = mkdtempSync(join(tmpdir(), 'braid-bench-page-'));
  writeFileSync(join(app, 'bench.mjs'), PAGE);
  await bundle(`export { cid } from ${JSON.stringify(`${root}/js/lib/reference.mjs`)};`, join(app, 'reference.js'));
  return inChromium({
    '/app/': app,
    '/wf/': `${wfDir}/cidv1_from_bytes/pkg/web`,
    '/mh/': `${opsDir}/op_multihash/web`,
    '/cid/': `${opsDir}/op_cid/web`,
    '/base/': process.env.BRAID_BASELINES_WEB ?? `${root}/target/bench/baselines-web`,
  }, { timeoutMs: 600_000 });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
