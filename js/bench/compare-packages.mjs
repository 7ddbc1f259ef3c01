// Two builds of one workflow's Node package side by side, in one process:
// each entry point's batches interleaved (`compare`), and the median of the
// per-round ratios of the second over the first (`paired`). For a change to
// the glue, build the workflow with the braid of before and of after:
//
//   node js/bench/compare-packages.mjs BEFORE_OUT AFTER_OUT [WORKFLOW] [--json]
//
// where each *_OUT is a `braid build ... --targets node -o` directory of
// WORKFLOW (default cidv1_from_bytes, whose one input is a Uint8Array);
// `--json` prints the rows as JSON rather than a table.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { compare, paired } from './lib.mjs';

const require = createRequire(import.meta.url);
const json = process.argv.includes('--json');
const [beforeDir, afterDir, workflow = 'cidv1_from_bytes'] = process.argv.slice(2).filter((a) => a !== '--json');
if (!afterDir) {
  console.error('usage: node js/bench/compare-packages.mjs BEFORE_OUT AFTER_OUT [WORKFLOW]');
  process.exit(2);
}
const load = (dir) => require(resolve(dir, 'pkg/node', `wf_${workflow}.js`));
const packages = { before: load(beforeDir), after: load(afterDir) };
const BATCH = 200;
const entries = {
  runSync: (wf, bytes) => () => { for (let i = 0; i < BATCH; i++) wf.runSync([bytes]); },
  run: (wf, bytes) => async () => { for (let i = 0; i < BATCH; i++) await wf.run([bytes]); },
  // A new Workflow's one `next`, and one used before it (its Wasm object made).
  next: (wf, bytes) => async () => { for (let i = 0; i < BATCH; i++) await new wf.Workflow().next([bytes]); },
  'next, used before': (wf, bytes) => async () => {
    for (let i = 0; i < BATCH; i++) {
      const w = new wf.Workflow();
      if (w.done) throw new Error('done before it ran');
      await w.next([bytes]);
      w.free();
    }
  },
  runMany: (wf, bytes) => {
    const list = Array.from({ length: BATCH }, () => [bytes]);
    return () => wf.runMany(list);
  },
  'stream update, finish': (wf, bytes) => () => {
    for (let i = 0; i < BATCH; i++) {
      const s = wf.stream();
      s.update(bytes);
      s.finish();
      s.free();
    }
  },
};
const rows = {};
for (const [label, size] of Object.entries({ '64 B': 64, '16 KiB': 16 * 1024 })) {
  const bytes = new Uint8Array(size).map((_, i) => i * 7);
  if (packages.after.runSync([bytes]) !== packages.before.runSync([bytes])) throw new Error(`the packages disagree at ${label}`);
  const variants = {};
  for (const [entry, make] of Object.entries(entries)) {
    if (entry.startsWith('stream') && typeof packages.before.stream !== 'function') continue;
    for (const [who, wf] of Object.entries(packages)) variants[`${entry} ${who}`] = make(wf, bytes);
  }
  const times = await compare(variants, { n: size > 4096 ? 200 : 600, rounds: 20, warmup: 20 });
  for (const entry of Object.keys(entries).filter((e) => `${e} after` in times)) {
    const [before, after] = [times[`${entry} before`], times[`${entry} after`]];
    const ratio = paired(after, before);
    rows[`${label} ${entry}`] = {
      'before us/call': +(before.median / BATCH).toFixed(3),
      'after us/call': +(after.median / BATCH).toFixed(3),
      'after / before': +ratio.ratio.toFixed(3),
      'rounds after was faster': `${Math.round(ratio.faster_share * ratio.rounds)}/${ratio.rounds}`,
    };
  }
}
if (json) console.log(JSON.stringify(rows));
else console.table(rows);
