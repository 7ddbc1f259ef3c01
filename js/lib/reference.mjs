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
