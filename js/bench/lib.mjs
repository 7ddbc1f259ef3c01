// Small helpers for the benchmarks: medians and spreads of repeated
// timings, and a page run in headless Chromium.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, serve } from '../lib/static-server.mjs';

/** Bundles the ES module source `contents` (imports resolved from js/)
 * into `outfile`, for a browser page. */
export async function bundle(contents, outfile) {
  const resolveDir = fileURLToPath(new URL('..', import.meta.url));
  await build({ stdin: { contents, resolveDir, loader: 'js' }, bundle: true, format: 'esm', platform: 'browser', outfile, logLevel: 'error' });
}

/** Serves `mounts` (URL prefix -> directory; `/app/bench.mjs` is the page's
 * script), opens it in headless Chromium and returns what the script leaves
 * in `window.result` (`{ error }` is thrown). */
export async function inChromium(mounts, { timeoutMs }) {
  const server = await serve(mounts);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  try {
    const page = await browser.newPage();
    // A script that fails to load or throws, or a page that crashes, leaves
    // no result: fail at once, saying why.
    const failed = new Promise((_, reject) => {
      page.on('pageerror', (e) => reject(new Error(`in Chromium: ${e}`)));
      page.on('crash', () => reject(new Error('the Chromium page crashed')));
      browser.on('disconnected', () => reject(new Error('Chromium exited')));
      // A module that fails to load stops the page's script without a pageerror.
      page.on('response', (r) => r.status() >= 400 && reject(new Error(`in Chromium: ${r.url()} answered ${r.status()}`)));
      page.on('requestfailed', (r) => reject(new Error(`in Chromium: ${r.url()} failed: ${r.failure()?.errorText}`)));
    });
    failed.catch(() => {}); // raced below; not unhandled while the page loads
    await Promise.race([page.goto(`${server.base}/page.html?script=/app/bench.mjs`), failed]);
    await Promise.race([
      page.waitForFunction(() => window.result !== undefined, null, { timeout: timeoutMs, polling: 500 }),
      failed,
    ]);
    const result = await page.evaluate(() => window.result);
    if (result.error) throw new Error(result.error);
    return result;
  } finally {
    await browser.close();
    server.close();
  }
}
export function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), p10: q(0.1), p90: q(0.9), n: s.length };
}

/** Times `fn` (sync or async) `n` times after `warmup` calls; microseconds. */
export async function time(fn, { n = 500, warmup = 50 } = {}) {
  for (let i = 0; i < warmup; i++) await fn();
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push((performance.now() - t) * 1e3);
  }
  return stats(out);
}

/** Times several variants interleaved in rounds (A B C A B C ...), so that
 * drift in the machine's speed affects all of them alike; microseconds.
 * Each variant's stats also keep its median in every round (`rounds`), for
 * paired comparisons ([`paired`]). */
export async function compare(variants, { n = 500, rounds = 5, warmup = 50 } = {}) {
  const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const perRound = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  // Warm up by time as well as by count: V8 runs Wasm in its baseline tier
  // (Liftoff) first and tiers up hot functions later; a few calls of a long
  // hash may not be enough for that.
  for (const fn of Object.values(variants)) {
    const until = performance.now() + 400;
    for (let i = 0; i < warmup || performance.now() < until; i++) await fn();
  }
  const per = Math.max(1, Math.floor(n / rounds));
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(variants)) {
      const round = [];
      for (let i = 0; i < per; i++) {
        const t = performance.now();
        await fn();
        round.push((performance.now() - t) * 1e3);
      }
      samples[name].push(...round);
      perRound[name].push(stats(round).median);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { ...stats(v), rounds: perRound[k] }]));
}

/** A against B measured in the same rounds: the median over rounds of
 * A's round median / B's, and the share of rounds in which A was faster.
 * Pairing by round cancels the machine's drift, which at 800 KiB is larger
 * than a difference of one call. */
export function paired(a, b) {
  const ratios = a.rounds.map((x, i) => x / b.rounds[i]);
  return { ratio: stats(ratios).median, faster_share: ratios.filter((r) => r < 1).length / ratios.length, rounds: ratios.length };
}

/** Per-call time of a cheap `fn` in microseconds: timed in batches (a single
 * call is below the timer's resolution), median over batches. */
export async function perCall(fn, { batch = 10_000, batches = 15 } = {}) {
  for (let i = 0; i < batch; i++) await fn();
  const out = [];
  for (let b = 0; b < batches; b++) {
    const t = performance.now();
    for (let i = 0; i < batch; i++) await fn();
    out.push(((performance.now() - t) * 1e3) / batch);
  }
  return stats(out);
}
