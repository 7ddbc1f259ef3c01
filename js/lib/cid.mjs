// The content id the service names artifacts by (CIDv1, raw codec, blake3,
// base32), computed independently of Braid with multiformats + @noble/hashes.
import { cid } from './reference.mjs';

export const contentId = (bytes) => cid(bytes, { hasher: 'blake3', base: 'base32', codec: 'raw' });
