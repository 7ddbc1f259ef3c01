// Independent reference implementation of what Braid's CID operations do,
// built from multiformats + @noble/hashes (no Braid code), and the
// deterministic inputs the test vectors use.
import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';
import { base32 } from 'multiformats/bases/base32';
import { base58btc } from 'multiformats/bases/base58';
import { base64url } from 'multiformats/bases/base64';
import { blake3 } from '@noble/hashes/blake3.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { sha3_256, keccak_256 } from '@noble/hashes/sha3.js';

export const HASHERS = {
  blake3: { code: 0x1e, fn: blake3 },
  'sha2-256': { code: 0x12, fn: sha256 },
  'sha2-512': { code: 0x13, fn: sha512 },
  'sha3-256': { code: 0x16, fn: sha3_256 },
  'keccak-256': { code: 0x1b, fn: keccak_256 },
};
export const BASES = { base32, base58btc, base64url };
export const CODECS = { raw: 0x55, 'dag-pb': 0x70, 'dag-cbor': 0x71, json: 0x0200 };

/** The input of `size` bytes used by the vectors: 11 bytes is "hello world",
 * any other size is the byte pattern (i * 31 + 7) mod 256. */
export function input(size) {
  if (size === 11) return new TextEncoder().encode('hello world');
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + 7) & 0xff;
  return out;
}

/** The encoded multihash of `bytes`. */
export function multihash(bytes, hasher = 'blake3') {
  const h = HASHERS[hasher];
  return Digest.create(h.code, h.fn(bytes)).bytes;
}

/** The CIDv1 text of `bytes`. */
export function cid(bytes, { hasher = 'blake3', base = 'base32', codec = 'raw' } = {}) {
  const h = HASHERS[hasher];
  const digest = Digest.create(h.code, h.fn(bytes));
  return CID.create(1, CODECS[codec], digest).toString(BASES[base]);
}

export const SIZES = [0, 11, 16 * 1024, 64 * 1024, 800 * 1024];

/** Every vector: each size x hasher x base with codec raw, plus each codec
 * for 11 bytes with sha2-256 in base32. */
export function vectors() {
  const cases = [];
  for (const size of SIZES) {
    const bytes = input(size);
    for (const hasher of Object.keys(HASHERS)) {
      for (const base of Object.keys(BASES)) {
        cases.push({ size, hasher, base, codec: 'raw', cid: cid(bytes, { hasher, base }) });
      }
    }
  }
  for (const codec of Object.keys(CODECS)) {
    cases.push({ size: 11, hasher: 'sha2-256', base: 'base32', codec, cid: cid(input(11), { hasher: 'sha2-256', codec }) });
  }
  return {
    about: 'CIDv1 test vectors computed by js/lib/reference.mjs (multiformats + @noble/hashes). ' +
      'Input of 11 bytes is "hello world"; any other size n is bytes (i * 31 + 7) mod 256 for i < n. ' +
      'Regenerate with `node js/scripts/make-vectors.mjs`.',
    cases,
  };
}

/** A workflow input as the vectors describe it, as bytes (for the
 * reference) and as the JS value a Workflow takes. `file` paths are
 * relative to the repository root `root`. */
export function inputValue(spec, root) {
  if ('pattern' in spec) return input(spec.pattern);
  if ('text' in spec) return spec.text;
  if ('file' in spec) return `${root}/${spec.file}`;
  throw new Error(`unknown input ${JSON.stringify(spec)}`);
}

const utf8 = (s) => new TextEncoder().encode(s);
const concat = (parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};

/** What each example workflow in workflows/ computes, written with the
 * reference implementation only. `calls` are the inputs of each `next`. */
export const WORKFLOWS = {
  cidv1_from_bytes: (calls) => cid(calls[0][0]),
  cidv1_sha2_256: (calls) => cid(calls[0][0], { hasher: 'sha2-256' }),
  dual_cid_of_text: (calls) => [cid(utf8(calls[0][0])), cid(utf8(calls[0][0]), { hasher: 'sha2-256', base: 'base58btc' })],
  salted_cid: (calls) => cid(concat([utf8(calls[0][0]), calls[1][0]]), { hasher: 'sha2-256' }),
  cid_of_file: (calls, readFile) => cid(readFile(calls[0][0])),
  hex_sha256_of_text: (calls) => Buffer.from(sha256(utf8(calls[0][0]))).toString('hex'),
  cid_of_base64: (calls) => cid(new Uint8Array(Buffer.from(calls[0][0], 'base64'))),
};

/** The workflow test vectors: inputs per `next` call and the expected output. */
export function workflowVectors(root, readFile) {
  const cases = [];
  const add = (workflow, calls) => {
    const values = calls.map((c) => c.map((s) => inputValue(s, root)));
    cases.push({ workflow, calls, output: WORKFLOWS[workflow](values, readFile) });
  };
  for (const size of SIZES) {
    add('cidv1_from_bytes', [[{ pattern: size }]]);
    add('cidv1_sha2_256', [[{ pattern: size }]]);
  }
  for (const text of ['hello world', '', 'h\u00e9llo \u2713 "quoted"\n\ttabbed \u{1f980}']) {
    add('dual_cid_of_text', [[{ text }]]);
  }
  add('salted_cid', [[{ text: 'salt:' }], [{ pattern: 1000 }]]);
  add('salted_cid', [[{ text: '' }], [{ pattern: 0 }]]);
  add('cid_of_file', [[{ file: 'workflows/samples/sample.txt' }]]);
  for (const text of ['abc', '', 'h\u00e9llo \u{1f980}']) add('hex_sha256_of_text', [[{ text }]]);
  for (const text of ['', 'aGVsbG8gd29ybGQ=', Buffer.from(input(1000)).toString('base64')]) add('cid_of_base64', [[{ text }]]);
  return {
    about: 'Expected outputs of the workflows in workflows/, computed by js/lib/reference.mjs ' +
      '(multiformats + @noble/hashes). Inputs: {pattern: n} is the byte pattern of operations/vectors/cid.json, ' +
      '{text} a string, {file} the path of a file in this repository. Regenerate with `node js/scripts/make-vectors.mjs`.',
    cases,
  };
}
