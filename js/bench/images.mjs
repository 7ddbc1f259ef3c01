// photo_proof on photos of about 0.3, 3 and 12 megapixels, in Node and in
// headless Chromium, side by side in one run (interleaved rounds): the fused workflow, the same
// operations chained as separate npm packages (the decoded pixels cross
// into JS and back), and the pipeline a JS user would write (jpeg-js,
// @noble/hashes + multiformats, blockhash-core). All three must agree on
// the file's CID; the fused and chained ones on everything. Also the peak
// Wasm memory of one fused run on the 12 MP photo in a fresh process,
// against the decoded image's size (width x height x 4).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import jpeg from 'jpeg-js';
import { draw, photoProof } from '../lib/images.mjs';
import { bundle, compare, inChromium } from './lib.mjs';
import { CHAIN_OPS, chainedPhotoProof } from './chain.mjs';
import { root, wfOut as wfDir, opPkgs as opsDir } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const pkg = `${wfDir}/photo_proof/pkg/node/wf_photo_proof.js`;
export const SIZES = { '0.3MP': [640, 480], '3MP': [2048, 1536], '12MP': [4000, 3000] };

/** The synthetic photo of `label` as a JPEG (quality 85), made once. */
export function photo(label) {
  const dir = `${root}/target/bench/images`;
  const path = `${dir}/${label}.jpg`;
  if (!existsSync(path)) {
    const [width, height] = SIZES[label];
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, jpeg.encode({ width, height, data: Buffer.from(draw(width, height, 7)) }, 85).data);
  }
  return new Uint8Array(readFileSync(path));
}

const op = (name) => require(`${opsDir}/${name}/node/${name}.js`);

export async function run() {
  const wf = require(pkg);
  const chained = chainedPhotoProof(CHAIN_OPS.map(op));
  // What a JS user would write: the independent implementation the tests
  // check against (jpeg-js, @noble/hashes + multiformats, blockhash-core).
  const pureJs = (file) => photoProof('photo.jpg', file);
  const out = { sizes: {} };
  for (const label of Object.keys(SIZES)) {
    const file = photo(label);
    const fused = wf.runSync([file]);
    if (JSON.stringify(chained(file)) !== JSON.stringify(fused)) throw new Error(`${label}: chained packages disagree with the fused workflow`);
    const js = pureJs(file);
    if (js.fileCid !== fused.fileCid || js.width !== fused.width) throw new Error(`${label}: pure JS disagrees on the file`);
    const big = label === '12MP';
    const row = await compare(
      { fused: () => wf.runSync([file]), chained: () => chained(file), pure_js: () => pureJs(file) },
      { n: big ? 5 : label === '3MP' ? 10 : 30, rounds: big ? 5 : 10, warmup: 1 },
    );
    for (const r of Object.values(row)) delete r.rounds;
    row.megapixels = (fused.width * fused.height) / 1e6;
    row.file_bytes = file.length;
    row.chained_over_fused = row.chained.median / row.fused.median;
    row.pure_js_over_fused = row.pure_js.median / row.fused.median;
    out.sizes[label] = row;
  }
  out.memory_12mp = peakMemory('12MP');
  return out;
}

/** One fused run on `label` in a fresh Node process: the module's memory
 * afterwards (Wasm memory only grows, so this is its peak). */
function peakMemory(label) {
  photo(label);
  const script = `
    const Instance = WebAssembly.Instance;
    let exports;
    WebAssembly.Instance = function (m, i) { const inst = new Instance(m, i); exports = inst.exports; return inst; };
    const wf = require(${JSON.stringify(pkg)});
    const before = exports.memory.buffer.byteLength;
    const file = new Uint8Array(require('node:fs').readFileSync(${JSON.stringify(`${root}/target/bench/images/${label}.jpg`)}));
    const proof = wf.runSync([file]);
    console.log(JSON.stringify({ before, after: exports.memory.buffer.byteLength, width: proof.width, height: proof.height }));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`peak memory run failed: ${r.stderr}`);
  const m = JSON.parse(r.stdout);
  const image = m.width * m.height * 4;
  return { ...m, image_bytes: image, ratio: m.after / image };
}

/** The page: the same three pipelines on the web packages and bundled pure
 * JS, interleaved in rounds, timed with performance.now(). */
const PAGE = `
import initWf, * as wf from '/wf/wf_photo_proof.js';
${CHAIN_OPS.map((o, i) => `import init${i}, * as op${i} from '/ops/${o}/web/${o}.js';`).join('\n')}
import { chainedPhotoProof } from '/bench/chain.mjs';
import { pureJs } from '/app/pure.js';
const stats = (s) => { s.sort((a, b) => a - b); const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))]; return { median: q(0.5), p10: q(0.1), p90: q(0.9), n: s.length }; };
try {
  await Promise.all([initWf(), ${CHAIN_OPS.map((_, i) => `init${i}()`).join(', ')}]);
  const chained = chainedPhotoProof([${CHAIN_OPS.map((_, i) => `op${i}`).join(', ')}]);
  const out = {};
  for (const [label, n] of ${JSON.stringify(Object.keys(SIZES).map((k) => [k, k === '12MP' ? 5 : k === '3MP' ? 8 : 20]))}) {
    const file = new Uint8Array(await (await fetch('/photos/' + label + '.jpg')).arrayBuffer());
    const fused = wf.runSync([file]);
    if (JSON.stringify(chained(file)) !== JSON.stringify(fused) || pureJs(file).fileCid !== fused.fileCid) throw new Error(label + ': outputs disagree');
    const variants = { fused: () => wf.runSync([file]), chained: () => chained(file), pure_js: () => pureJs(file) };
    const samples = { fused: [], chained: [], pure_js: [] };
    for (let i = 0; i < n; i++) for (const [k, fn] of Object.entries(variants)) {
      const t = performance.now();
      fn();
      samples[k].push((performance.now() - t) * 1e3);
    }
    const row = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
    row.chained_over_fused = row.chained.median / row.fused.median;
    row.pure_js_over_fused = row.pure_js.median / row.fused.median;
    out[label] = row;
  }
  window.result = { sizes: out, userAgent: navigator.userAgent };
} catch (e) { window.result = { error: String(e.stack || e) }; }
`;

/** The same comparison in headless Chromium (web packages; pure JS bundled
 * by esbuild). */
export async function runChromium() {
  for (const label of Object.keys(SIZES)) photo(label);
  const app = mkdtempSync(join(tmpdir(), 'braid-bench-images-'));
  writeFileSync(join(app, 'bench.mjs'), PAGE);
  // What js/lib/images.mjs's photoProof does for a JPEG, bundled for the page.
  const pure = `
    import jpeg from 'jpeg-js';
    import { proofOf } from ${JSON.stringify(`${root}/js/lib/proof.mjs`)};
    export const pureJs = (file) =>
      proofOf(file, jpeg.decode(file, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 1024 }));`;
  await bundle(pure, join(app, 'pure.js'));
  return inChromium({
    '/app/': app,
    '/wf/': `${wfDir}/photo_proof/pkg/web`,
    '/ops/': opsDir,
    '/photos/': `${root}/target/bench/images`,
    '/bench/': `${root}/js/bench`,
  }, { timeoutMs: 900_000 });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const node = await run();
  const chromiumResult = process.argv.includes('--no-chromium') ? undefined : await runChromium();
  console.log(JSON.stringify({ node, chromium: chromiumResult }, null, 2));
}
