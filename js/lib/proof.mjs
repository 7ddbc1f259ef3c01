// photo_proof's record from a file and its decoded pixels, computed
// independently of Braid (multiformats + @noble/hashes for the CIDs,
// blockhash-core for the hash). Apart from js/lib/images.mjs, which decodes
// with pngjs (Node only), so that a browser page can bundle it.
import { bmvbhash } from 'blockhash-core';
import { cid } from './reference.mjs';

/** The proof of `file`, given its decoded `image` (`{ width, height, data }`, RGBA8). */
export function proofOf(file, image) {
  return {
    fileCid: cid(file, { hasher: 'blake3', base: 'base32', codec: 'raw' }),
    pixelsCid: cid(image.data, { hasher: 'sha2-256', base: 'base32', codec: 'raw' }),
    blockhash: bmvbhash(image, 8),
    width: image.width,
    height: image.height,
  };
}
