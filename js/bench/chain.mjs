// photo_proof as a JS user would chain the operations' own npm packages
// (each `executeSync` a call into its own module; the decoded image comes
// out to JS and goes back in). One definition for Node and the browser
// page of js/bench/images.mjs, which pass their packages in.

/** The operations the chain calls, in the order `chainedPhotoProof` takes them. */
export const CHAIN_OPS = ['op_image_decode', 'op_image_pixels', 'op_image_phash', 'op_multihash', 'op_cid'];

/** The chain over the packages of `CHAIN_OPS` (in that order). */
export function chainedPhotoProof([decode, pixels, phash, mh, toCid]) {
  const raw = { base: 'base32', codec: 'raw' };
  return (file) => {
    const image = decode.executeSync(file);
    return {
      fileCid: toCid.executeSync(mh.executeSync(file, { hasher: 'blake3' }), raw),
      pixelsCid: toCid.executeSync(mh.executeSync(pixels.executeSync(image), { hasher: 'sha2-256' }), raw),
      blockhash: phash.executeSync(image, { algorithm: 'blockhash' }),
      width: image.width,
      height: image.height,
    };
  };
}
