// Benchmarks of the call boundary and of streaming (cidv1_from_bytes),
// side by side in one run:
//   - boundary(): per call at 64 B, 1 KiB and 16 KiB of runSync, run, new
//     Workflow().next and runMany (per item, batches of 200) against the
//     hand-written floor (bench/baselines' cid_floor), interleaved;
//   - node(): CIDv1 (blake3) of 1 GiB in 1 MiB chunks through stream(),
//     against hash-wasm's createBLAKE3(), @noble/hashes' blake3.create(),
//     Node's crypto sha256 and the floor's in-memory throughput at 800 KiB,
//     interleaved in rounds; and the RSS growth of runStream over a Node
//     Readable of 1 GiB, in a fresh process;
//   - chromium(): a 256 MiB File chosen in an <input type=file> through
//     runStream, its throughput and the page's memory.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, openSync, writeSync, closeSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createBLAKE3 } from 'hash-wasm';
import { blake3 } from '@noble/hashes/blake3.js';
import { chromium as playwright } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, serve } from '../lib/static-server.mjs';
import { cid as referenceCid, input } from '../lib/reference.mjs';
import { compare, stats } from './lib.mjs';
import { root, wfOut as wfDir } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const pkg = `${wfDir}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes.js`;
const baselinesFile = process.env.BRAID_BASELINES ?? `${root}/target/bench/baselines/braid_bench_baselines.js`;
const MiB = 1 << 20;
const GiB = 1 << 30;

/** Four different 1 MiB chunks, cycled. */
const chunks = () => [1, 2, 3, 4].map((seed) => input(MiB + seed).subarray(seed));

/**
 * A module of its own: a fresh Wasm instance, whatever the earlier
 * benchmarks did with the cached one (after them, the floor's instance was
 * once seen taking 30 us instead of 10 for every 16 KiB call, its allocator
 * left in another state by the large inputs before).
 */
function fresh(file) {
  delete require.cache[require.resolve(file)];
  return require(file);
}

/** Per-call microseconds of runSync, run, next and runMany (per item) against the floor, each on a fresh instance. */
export async function boundary() {
  const wf = fresh(pkg);
  const baselines = fresh(baselinesFile);
  const BATCH = 200;
  const rows = {};
  for (const [label, size] of Object.entries({ '64B': 64, '1KiB': 1024, '16KiB': 16 * 1024 })) {
    const bytes = input(size);
    const expected = referenceCid(bytes);
    const list = Array.from({ length: BATCH }, () => [bytes]);
    const outputs = await wf.runMany(list);
    if (outputs.some((o) => o !== expected) || baselines.cid_floor(bytes) !== expected || (await new wf.Workflow().next([bytes])).output !== expected) {
      throw new Error(`an entry point disagrees with the reference at ${label}`);
    }
    // Each sample is a batch of calls (one call at 64 B is below the
    // timer's resolution); the batches of all variants are interleaved.
    const times = await compare(
      {
        floor: () => {
          for (let i = 0; i < BATCH; i++) baselines.cid_floor(bytes);
        },
        runSync: () => {
          for (let i = 0; i < BATCH; i++) wf.runSync([bytes]);
        },
        run: async () => {
          for (let i = 0; i < BATCH; i++) await wf.run([bytes]);
        },
        next: async () => {
          for (let i = 0; i < BATCH; i++) await new wf.Workflow().next([bytes]);
        },
        runMany: () => wf.runMany(list),
      },
      { n: size > 4096 ? 200 : 600, rounds: 20, warmup: 20 },
    );
    const row = {};
    for (const [name, t] of Object.entries(times)) {
      row[name] = { per_call_us: t.median / BATCH, p10: t.p10 / BATCH, p90: t.p90 / BATCH };
    }
    for (const r of Object.values(row)) {
      r.ratio_to_floor = r.per_call_us / row.floor.per_call_us;
      r.over_floor_us = r.per_call_us - row.floor.per_call_us;
    }
    rows[label] = row;
  }
  return rows;
}

/** MiB/s of `feed(chunk)` over `total` bytes of 1 MiB chunks, then `done()`. */
function throughput(total, feed, done) {
  const parts = chunks();
  const t = performance.now();
  for (let fed = 0, i = 0; fed < total; fed += MiB, i++) feed(parts[i % parts.length]);
  done();
  return total / MiB / ((performance.now() - t) / 1e3);
}

/** Streaming throughput in Node against the alternatives, and the RSS growth of runStream of 1 GiB. */
export async function node({ rounds = 3 } = {}) {
  const wf = require(pkg);
  const baselines = require(baselinesFile);
  const hashWasm = await createBLAKE3();
  // Outputs agree before anything is timed.
  const sample = input(3 * MiB + 1);
  const s = wf.stream();
  for (let i = 0; i < sample.length; i += MiB) s.update(sample.subarray(i, i + MiB));
  if (s.finish() !== referenceCid(sample)) throw new Error('stream() disagrees with the reference');
  s.free();
  hashWasm.init();
  hashWasm.update(sample);
  if (hashWasm.digest('hex') !== Buffer.from(blake3(sample)).toString('hex')) throw new Error('hash-wasm disagrees with @noble/hashes');
  const floorInput = input(800 * 1024);
  const contenders = {
    braid_stream: () => {
      const st = wf.stream();
      return throughput(GiB, (c) => st.update(c), () => (st.finish(), st.free()));
    },
    hash_wasm_blake3: () => {
      hashWasm.init();
      return throughput(GiB, (c) => hashWasm.update(c), () => hashWasm.digest('binary'));
    },
    // Pure JS is slower: 128 MiB per round.
    noble_blake3: () => {
      const h = blake3.create();
      return throughput(128 * MiB, (c) => h.update(c), () => h.digest());
    },
    node_crypto_sha256: () => {
      const h = createHash('sha256');
      return throughput(GiB, (c) => h.update(c), () => h.digest());
    },
    floor_in_memory_800KiB: () => {
      const calls = 320;
      const t = performance.now();
      for (let i = 0; i < calls; i++) baselines.cid_floor(floorInput);
      return (calls * floorInput.length) / MiB / ((performance.now() - t) / 1e3);
    },
  };
  for (const f of Object.values(contenders)) f(); // warm up (tier-up)
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) for (const [name, f] of Object.entries(contenders)) samples[name].push(f());
  const mibs = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v).median]));
  const rss = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--rss-child'], { encoding: 'utf8', env: process.env });
  if (rss.status !== 0) throw new Error(`the RSS measurement failed: ${rss.stderr}`);
  return { mib_per_s: mibs, ratio_to_floor: mibs.braid_stream / mibs.floor_in_memory_800KiB, rounds, run_stream_1gib: JSON.parse(rss.stdout) };
}

/** In a fresh process: runStream over a Node Readable of 1 GiB in 1 MiB chunks; the RSS growth. */
async function rssChild() {
  const wf = require(pkg);
  await wf.runStream(Readable.from([new Uint8Array(16)])); // the module loaded and instantiated
  const before = process.memoryUsage.rss();
  let peak = before;
  const parts = chunks();
  function* gigabyte() {
    for (let i = 0; i < 1024; i++) {
      peak = Math.max(peak, process.memoryUsage.rss());
      yield parts[i % parts.length];
    }
  }
  const t = performance.now();
  await wf.runStream(Readable.from(gigabyte()));
  const seconds = (performance.now() - t) / 1e3;
  peak = Math.max(peak, process.memoryUsage.rss());
  process.stdout.write(JSON.stringify({ rss_before_mib: before / MiB, rss_peak_mib: peak / MiB, rss_growth_mib: (peak - before) / MiB, mib_per_s: 1024 / seconds }));
}

/** A 256 MiB File chosen in an <input type=file> of a Chromium page, through runStream. */
export async function chromium() {
  const dir = mkdtempSync(join(tmpdir(), 'braid-bench-file-'));
  const file = join(dir, 'input.bin');
  const fd = openSync(file, 'w');
  const parts = chunks();
  for (let i = 0; i < 256; i++) writeSync(fd, parts[i % parts.length]);
  closeSync(fd);
  const app = mkdtempSync(join(tmpdir(), 'braid-bench-page-'));
  const { writeFileSync } = await import('node:fs');
  writeFileSync(
    join(app, 'bench.mjs'),
    `import init, { runStream } from '/wf/wf_cidv1_from_bytes.js';
    const wasm = await init();
    const input = document.createElement('input');
    input.type = 'file';
    document.body.append(input);
    input.addEventListener('change', async () => {
      try {
        const file = input.files[0];
        const before = wasm.memory.buffer.byteLength;
        const times = [];
        let output;
        for (let i = 0; i < 3; i++) {
          const t = performance.now();
          output = await runStream(file);
          times.push(performance.now() - t);
        }
        times.sort((a, b) => a - b);
        window.result = { output, size: file.size, ms: times[1], wasm_memory_before: before, wasm_memory_after: wasm.memory.buffer.byteLength };
      } catch (e) {
        window.result = { error: String(e) };
      }
    });`,
  );
  const server = await serve({ '/wf/': join(wfDir, 'cidv1_from_bytes/pkg/web'), '/app/': app });
  const browser = await playwright.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  try {
    const page = await browser.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${server.base}/page.html?script=/app/bench.mjs`);
    await page.setInputFiles('input[type=file]', file);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 300_000, polling: 500 });
    const result = await page.evaluate(() => window.result);
    if (result.error) throw new Error(result.error);
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const expected = (() => {
      const st = require(pkg).stream();
      for (let i = 0; i < 256; i++) st.update(parts[i % parts.length]);
      return st.finish();
    })();
    if (result.output !== expected) throw new Error('Chromium runStream disagrees with Node');
    return {
      file_mib: result.size / MiB,
      mib_per_s: result.size / MiB / (result.ms / 1e3),
      wasm_memory_mib: result.wasm_memory_after / MiB,
      wasm_memory_growth_mib: (result.wasm_memory_after - result.wasm_memory_before) / MiB,
      js_heap_used_mib: metrics.JSHeapUsedSize / MiB,
      js_heap_total_mib: metrics.JSHeapTotalSize / MiB,
    };
  } finally {
    await browser.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(app, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--rss-child') await rssChild();
