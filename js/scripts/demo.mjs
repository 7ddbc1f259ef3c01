// The demo's Wasm half: CIDv1 of a file through the standalone op_multihash
// and op_cid Node packages, checked against the reference implementation.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cid as referenceCid } from '../lib/reference.mjs';

const require = createRequire(import.meta.url);
const pkgs = process.env.BRAID_OP_PKGS ?? fileURLToPath(new URL('../../target/npm', import.meta.url));
const opMultihash = require(`${pkgs}/op_multihash/node/op_multihash.js`);
const opCid = require(`${pkgs}/op_cid/node/op_cid.js`);

const path = process.argv[2];
if (!path) {
  console.error('usage: node js/scripts/demo.mjs FILE');
  process.exit(2);
}
const bytes = readFileSync(path);
const run = () => opCid.executeSync(opMultihash.executeSync(bytes, { hasher: 'blake3' }), { base: 'base32', codec: 'raw' });
const cid = run();
const rounds = 2000;
const times = [];
for (let i = 0; i < rounds; i++) {
  const t0 = process.hrtime.bigint();
  run();
  times.push(Number(process.hrtime.bigint() - t0));
}
times.sort((a, b) => a - b);
const median = times[rounds >> 1] / 1e3;
const reference = referenceCid(new Uint8Array(bytes));
console.log(`wasm   (op_multihash -> op_cid in Node):     ${cid}`);
console.log(`reference (multiformats + @noble/hashes):   ${reference}`);
console.log(`wasm: ${bytes.length} bytes, median ${median.toFixed(1)} us per CID over ${rounds} runs (two calls across the boundary)`);
if (cid !== reference) {
  console.error('MISMATCH between Braid and the reference implementation');
  process.exit(1);
}
