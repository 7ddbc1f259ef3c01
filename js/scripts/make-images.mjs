// Writes the sample images the image operations are tested on, and what
// independent JS decoders make of them: workflows/samples/images/. The
// images are synthetic "photos" drawn from a seeded generator (smooth
// gradients, discs, a little noise), so they are the same on every run;
// pngjs and jpeg-js encode them. `<file>.rgba` is the RGBA8 pixels pngjs or
// jpeg-js decodes from each file: the reference the Rust decoder is checked
// against (exactly for PNG; within a tolerance for JPEG, whose decoders are
// not bit-exact); `exif.jpg.tags.json` the tags exifreader reads from
// exif.jpg (piexifjs wrote them); `proofs.json` what photo_proof should
// output for each file, from multiformats, @noble/hashes and blockhash-core
// on those pixels (see `photoProof`). Run by `make bless`; the Node tests
// check that the committed files still match.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exifTags, images, photoProof } from '../lib/images.mjs';

const dir = fileURLToPath(new URL('../../workflows/samples/images/', import.meta.url));
mkdirSync(dir, { recursive: true });
const proofs = {};
for (const { name, file, rgba } of images()) {
  proofs[name] = photoProof(name, file);
  writeFileSync(dir + name, file);
  writeFileSync(`${dir}${name}.rgba`, rgba);
  console.log(`wrote workflows/samples/images/${name} (${file.length} bytes) and its .rgba`);
}
const exif = readFileSync(`${dir}exif.jpg`);
writeFileSync(`${dir}exif.jpg.tags.json`, JSON.stringify(exifTags(exif), null, 2) + '\n');
console.log('wrote workflows/samples/images/exif.jpg.tags.json (its tags as exifreader reads them)');
writeFileSync(`${dir}proofs.json`, JSON.stringify(proofs, null, 2) + '\n');
console.log('wrote workflows/samples/images/proofs.json (photo_proof of each, from independent implementations)');
