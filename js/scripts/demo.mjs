// The demo's Node half: loads the workflow package `braid build` made, runs
// it on a file, prints the CID and timings, and checks the CID against the
// independent reference implementation.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { cid as referenceCid } from '../lib/reference.mjs';

const [pkg, path] = process.argv.slice(2);
if (!pkg || !path) {
  console.error('usage: node js/scripts/demo.mjs PKG_JS FILE');
  process.exit(2);
}
const t0 = performance.now();
const wf = createRequire(import.meta.url)(resolve(pkg));
const loaded = performance.now() - t0;
const bytes = new Uint8Array(readFileSync(path));

const step = await new wf.Workflow().next([bytes]);
const rounds = 2000;
const times = [];
for (let i = 0; i < rounds; i++) {
  const t = performance.now();
  await wf.run([bytes]);
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const reference = referenceCid(bytes);
console.log(`node   (pkg/node, one Wasm call):  ${step.output}`);
console.log(`reference (multiformats + noble):  ${reference}`);
console.log(
  `node: package loaded in ${loaded.toFixed(1)} ms; run() on ${bytes.length} bytes: median ${(times[rounds >> 1] * 1e3).toFixed(1)} us ` +
    `over ${rounds} runs (first next(): segmentTime ${step.segmentTime.toFixed(3)} ms)`,
);
if (step.output !== reference) {
  console.error('MISMATCH between Braid and the reference implementation');
  process.exit(1);
}
