// Two builds of one workflow's Node package side by side, in one process:
// each entry point's batches interleaved (`compare`), and the median of the
// per-round ratios of the second over the first (`paired`). For a change to
// the glue, build the workflow with the braid of before and of after:
//
//   node js/bench/compare-packages.mjs BEFORE_OUT AFTER_OUT [WORKFLOW] [--runs N] [--json] [--report BASE]
//
// where each *_OUT is a `braid build ... --targets node -o` directory of
// WORKFLOW (default cidv1_from_bytes, whose one input is a Uint8Array).
// With `--runs N` (default 1) the comparison runs in N processes of its
// own, one after the other, every other one loading and timing the after
// package first: one process's ratios vary little from round to round, but
// by a few per cent from one process to the next (where V8 puts the code
// and the memory), so a row gives the median of the processes' ratios and
// their range. `--json` prints the rows as JSON rather than a table;
// `--report BASE` (what `make bench-glue` passes: the git revision
// BEFORE_OUT was built at) also writes them to bench/glue.json and
// bench/GLUE.md.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compare, paired, stats } from './lib.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const [, value] = args.splice(at, 2);
  if (value === undefined) throw new Error(`${name} takes a value`);
  return value;
};
const flag = (name) => args.includes(name) && args.splice(args.indexOf(name), 1).length > 0;
const json = flag('--json');
// One process of a `--runs` comparison: its rows as JSON, the after package first if `--after-first`.
const child = flag('--child');
const afterFirst = flag('--after-first');
const runs = Number(option('--runs') ?? 1);
const base = option('--report');
const [beforeDir, afterDir, workflow = 'cidv1_from_bytes'] = args;
if (!afterDir || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node js/bench/compare-packages.mjs BEFORE_OUT AFTER_OUT [WORKFLOW] [--runs N] [--json] [--report BASE]');
  process.exit(2);
}
const load = (dir) => require(resolve(dir, 'pkg/node', `wf_${workflow}.js`));
const packages = afterFirst ? { after: load(afterDir), before: load(beforeDir) } : { before: load(beforeDir), after: load(afterDir) };
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
const SIZES = { '64 B': 64, '16 KiB': 16 * 1024 };

/** One comparison of every entry point at every size: per row, the times of a call and after / before. */
async function once() {
  const rows = {};
  for (const [label, size] of Object.entries(SIZES)) {
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
      rows[`${label} ${entry}`] = { before: before.median / BATCH, after: after.median / BATCH, ...paired(after, before) };
    }
  }
  return rows;
}

if (child) {
  console.log(JSON.stringify(await once()));
  process.exit(0);
}
const measured = [];
for (let run = 0; run < runs; run++) {
  const argv = [process.argv[1], beforeDir, afterDir, workflow, '--child', ...(run % 2 === 1 ? ['--after-first'] : [])];
  measured.push(JSON.parse(execFileSync(process.execPath, argv, { encoding: 'utf8', maxBuffer: 1 << 20 })));
}
const rows = {};
for (const row of Object.keys(measured[0])) {
  const of = (key) => stats(measured.map((m) => m[row][key]));
  const ratios = measured.map((m) => m[row].ratio);
  const ratio = of('ratio');
  rows[row] = {
    'before us/call': +of('before').median.toFixed(3),
    'after us/call': +of('after').median.toFixed(3),
    'after / before': +ratio.median.toFixed(3),
    ...(runs > 1 && { 'range over runs': `${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)}` }),
  };
}
if (json) console.log(JSON.stringify(rows));
else console.table(rows);

if (base !== undefined) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const slower = Object.entries(rows).filter(([, r]) => r['after / before'] > 1);
  const result = { date: new Date().toISOString(), cores: availableParallelism(), base, workflow, runs, batch: BATCH, rows };
  writeFileSync(`${root}/bench/glue.json`, `${JSON.stringify(result, null, 2)}\n`);
  const columns = Object.keys(Object.values(rows)[0]);
  const lines = [
    "# The npm glue against the glue of before",
    '',
    `Measured by \`make bench-glue\` (js/bench/compare-packages.mjs) on ${result.cores} cores, ${result.date}: the Node`,
    `package of ${workflow} built by this tree's braid ("after") and by the braid of \`${base}\` ("before"),`,
    `loaded in one process. Each entry point is timed in batches of ${BATCH} calls, before and after interleaved`,
    'over 20 rounds; a run\'s ratio is the median of the per-round ratios. Each row gives the median of',
    `${runs} runs' ratios${runs > 1 ? ' and their range, each run a process of its own, every other one timing the after package first' : ''}.`,
    'Times are the median per call.',
    '',
    `| entry point | ${columns.join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    ...Object.entries(rows).map(([row, r]) => `| ${row} | ${columns.map((c) => r[c]).join(' | ')} |`),
    '',
    slower.length === 0
      ? 'No entry point is slower than before (every median ratio is at most 1).'
      : `Slower than before by the median ratio: ${slower.map(([row, r]) => `${row} (${r['after / before']}${runs > 1 ? `, ${r['range over runs']}` : ''})`).join('; ')}.`,
    '',
  ];
  writeFileSync(`${root}/bench/GLUE.md`, lines.join('\n'));
}
