// Benchmarks of a generated workflow package in Node, side by side in one
// run: CIDv1 (blake3, raw, base32) through the fused workflow (`run` and
// `next`), through the two standalone operation packages called one after
// the other (the multihash crossing the boundary), and in pure JS
// (multiformats + @noble/hashes). Also the per-call overhead (empty input),
// cold start in a fresh process, and the .wasm size.
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { cid as referenceCid, input } from '../lib/reference.mjs';
import { compare, paired, perCall, stats, time } from './lib.mjs';
import { root, wfOut as wfDir, opPkgs as opsDir } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const pkg = `${wfDir}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes.js`;

export async function run() {
  const wf = require(pkg);
  const mh = require(`${opsDir}/op_multihash/node/op_multihash.js`);
  const cid = require(`${opsDir}/op_cid/node/op_cid.js`);
  const baselines = require(process.env.BRAID_BASELINES ?? `${root}/target/bench/baselines/braid_bench_baselines.js`);
  const sizes = { '16KiB': 16 * 1024, '64KiB': 64 * 1024, '800KiB': 800 * 1024 };
  const results = { sizes: {} };
  for (const [label, size] of Object.entries(sizes)) {
    const bytes = input(size);
    const expected = referenceCid(bytes);
    if ((await wf.run([bytes])) !== expected) throw new Error('fused workflow disagrees with the reference');
    const n = size > 100_000 ? 100 : 500;
    const json = JSON.stringify([...bytes]);
    for (const [name, got] of [
      ['floor', baselines.cid_floor(bytes)],
      ['serde_json', JSON.parse(baselines.cid_serde_json(json))],
      ['serde_wasm_bindgen', baselines.cid_serde_wasm_bindgen(bytes)],
    ]) {
      if (got !== expected) throw new Error(`${name} disagrees with the reference`);
    }
    const row = await compare(
      {
        floor: () => baselines.cid_floor(bytes),
        fused_run: () => wf.run([bytes]),
        fused_run_sync: () => wf.runSync([bytes]),
        fused_next: () => new wf.Workflow().next([bytes]),
        chained_ops: () => cid.executeSync(mh.executeSync(bytes)),
        chained_ops_async: async () => cid.execute(await mh.execute(bytes)),
        serde_wasm_bindgen: () => baselines.cid_serde_wasm_bindgen(bytes),
        // Anagolay-style: JSON in and out (the JS side serializes too).
        serde_json: () => JSON.parse(baselines.cid_serde_json(JSON.stringify(Array.from(bytes)))),
      },
      // Many short rounds, for the paired comparisons.
      size > 100_000 ? { n: 120, rounds: 20 } : { n, rounds: 25 },
    );
    row.pure_js = await time(() => referenceCid(bytes), { n: Math.max(20, n / 5) });
    row.pure_js.ratio_to_floor = row.pure_js.median / row.floor.median;
    for (const r of Object.values(row)) r.ratio_to_floor = r.median / row.floor.median;
    // Fused against chained, sync against sync and async against async: a
    // comparison of its own, in many short rounds (A B C D A B C D ...),
    // since at 800 KiB the difference (about one call) is far below the
    // machine's drift over the rounds above.
    const pair = await compare(
      {
        fused_run_sync: () => wf.runSync([bytes]),
        chained_ops: () => cid.executeSync(mh.executeSync(bytes)),
        fused_run: () => wf.run([bytes]),
        chained_ops_async: async () => cid.execute(await mh.execute(bytes)),
      },
      size > 100_000 ? { n: 1000, rounds: 200 } : { n: 4000, rounds: 200 },
    );
    row.paired = {
      run_sync_vs_execute_sync: paired(pair.fused_run_sync, pair.chained_ops),
      run_vs_await_execute: paired(pair.fused_run, pair.chained_ops_async),
    };
    results.sizes[label] = row;
  }
  const empty = new Uint8Array(0);
  results.text = await textWorkflow(mh, cid);
  results.per_call_overhead_us = await perCall(() => wf.run([empty]));
  results.per_call_run_sync_us = await perCall(() => wf.runSync([empty]));
  results.per_call_floor_us = await perCall(() => baselines.cid_floor(empty));
  results.per_call_chained_ops_us = await perCall(() => cid.executeSync(mh.executeSync(empty)));
  // Cold start: a fresh Node process loads the package and gets a first
  // result. The hand-written floor's package is timed the same way,
  // interleaved, since most of this is Node and V8 starting Wasm.
  const coldScript = (file, call) =>
    `const t = performance.now(); const m = require(${JSON.stringify(file)});
    Promise.resolve(m.${call}).then(() => console.log(performance.now() - t));`;
  const coldOf = (script) => Number(spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' }).stdout);
  const baselinesFile = process.env.BRAID_BASELINES ?? `${root}/target/bench/baselines/braid_bench_baselines.js`;
  const cold = { fused: [], floor: [] };
  for (let i = 0; i < 15; i++) {
    cold.fused.push(coldOf(coldScript(pkg, 'run([new Uint8Array(16384)])')));
    cold.floor.push(coldOf(coldScript(baselinesFile, 'cid_floor(new Uint8Array(16384))')));
  }
  results.cold_start_ms = stats(cold.fused).median;
  results.cold_start_floor_ms = stats(cold.floor).median;
  const wasm = readFileSync(`${wfDir}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes_bg.wasm`);
  results.wasm_bytes = { raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length };
  return results;
}

/** CIDv1 of a text's UTF-8 bytes (bench/workflows/cid_of_text.json), where
 * chaining moves the bytes out of op_utf8 into JS and into op_multihash. */
export async function textWorkflow(mh, cid) {
  const dir = process.env.BRAID_TEXT_WF ?? `${root}/target/bench/cid_of_text/pkg/node`;
  const wf = require(`${dir}/wf_cid_of_text.js`);
  const utf8 = require(`${opsDir}/op_utf8/node/op_utf8.js`);
  const out = { sizes: {} };
  for (const [label, size] of [['16KiB', 16 * 1024], ['64KiB', 64 * 1024], ['800KiB', 800 * 1024]]) {
    const text = Array.from({ length: size }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join('');
    const expected = referenceCid(new TextEncoder().encode(text));
    if (wf.runSync([text]) !== expected || cid.executeSync(mh.executeSync(utf8.executeSync(text))) !== expected) {
      throw new Error('text workflow disagrees with the reference');
    }
    const row = await compare(
      {
        fused_run_sync: () => wf.runSync([text]),
        chained_ops: () => cid.executeSync(mh.executeSync(utf8.executeSync(text))),
        fused_run: () => wf.run([text]),
        chained_ops_async: async () => cid.execute(await mh.execute(await utf8.execute(text))),
      },
      size > 100_000 ? { n: 400, rounds: 100 } : { n: 2000, rounds: 100 },
    );
    row.paired = {
      run_sync_vs_execute_sync: paired(row.fused_run_sync, row.chained_ops),
      run_vs_await_execute: paired(row.fused_run, row.chained_ops_async),
    };
    for (const r of [row.fused_run_sync, row.chained_ops, row.fused_run, row.chained_ops_async]) delete r.rounds;
    out.sizes[label] = row;
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
