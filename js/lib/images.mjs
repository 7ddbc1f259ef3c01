// Synthetic sample images, encoded and decoded by independent JS libraries
// (pngjs 7, jpeg-js 0.4): the references of Braid's image operations.
import { PNG } from 'pngjs';
import jpeg from 'jpeg-js';
import piexif from 'piexifjs';
import ExifReader from 'exifreader';
import { proofOf } from './proof.mjs';

/** A small seeded PRNG (mulberry32), so the images are the same everywhere. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** RGBA8 pixels of a `width` x `height` "photo": gradients, discs, noise. */
export function draw(width, height, seed, alpha = false) {
  const next = random(seed);
  const discs = Array.from({ length: 5 }, () => ({
    x: next() * width,
    y: next() * height,
    r: (0.1 + next() * 0.3) * Math.min(width, height),
    c: [next() * 255, next() * 255, next() * 255],
  }));
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let c = [(255 * x) / width, (255 * y) / height, 128 + 100 * Math.sin((x + y) / 7)];
      for (const d of discs) {
        if ((x - d.x) ** 2 + (y - d.y) ** 2 < d.r ** 2) c = c.map((v, i) => (v + d.c[i]) / 2);
      }
      const i = (y * width + x) * 4;
      for (let k = 0; k < 3; k++) out[i + k] = Math.max(0, Math.min(255, Math.round(c[k] + (next() - 0.5) * 12)));
      out[i + 3] = alpha ? Math.round((255 * (x + y)) / (width + height)) : 255;
    }
  }
  return out;
}

function png(width, height, rgba, options) {
  const image = new PNG({ width, height, ...options });
  image.data = Buffer.from(rgba);
  return PNG.sync.write(image, options);
}

/** The sample files with what pngjs or jpeg-js decodes from them. */
export function images() {
  const photo = draw(64, 48, 1);
  const odd = draw(33, 17, 2, true);
  const gray = draw(40, 30, 3);
  const files = [
    { name: 'photo.png', file: png(64, 48, photo, { colorType: 2 }) },
    { name: 'alpha.png', file: png(33, 17, odd, { colorType: 6 }) },
    { name: 'gray.png', file: png(40, 30, gray, { colorType: 0 }) },
    { name: 'photo.jpg', file: jpeg.encode({ width: 64, height: 48, data: Buffer.from(photo) }, 90).data },
    { name: 'large.jpg', file: jpeg.encode({ width: 160, height: 120, data: Buffer.from(draw(160, 120, 4)) }, 85).data },
  ];
  files.push({ name: 'exif.jpg', file: withExif(files[3].file) });
  return files.map(({ name, file }) => ({ name, file, rgba: decode(name, file).data }));
}

/** A JPEG with EXIF tags of each kind op_exif writes out (written by piexifjs). */
function withExif(file) {
  const { ImageIFD, ExifIFD } = piexif;
  const exif = piexif.dump({
    '0th': {
      [ImageIFD.Make]: 'Braid',
      [ImageIFD.Model]: 'Synthetic camera 1',
      [ImageIFD.Orientation]: 6,
      [ImageIFD.XResolution]: [72, 1],
      [ImageIFD.YResolution]: [300, 4],
      [ImageIFD.Software]: 'js/lib/images.mjs',
    },
    Exif: {
      [ExifIFD.DateTimeOriginal]: '2026:11:23 10:00:00',
      [ExifIFD.ExposureTime]: [1, 125],
      [ExifIFD.ISOSpeedRatings]: 200,
      [ExifIFD.ExifVersion]: '0231',
    },
  });
  return Buffer.from(piexif.insert(exif, Buffer.from(file).toString('binary')), 'binary');
}

/**
 * The EXIF tags exifreader reads from a file, as op_exif writes them:
 * name -> text (ASCII as is, numbers in decimal, rationals as n/d, several
 * joined by ", ", undefined bytes in hex); pointers to IFDs left out.
 */
export function exifTags(file) {
  const pointers = new Set([34665, 34853, 40965]);
  const text = (tag) => {
    const { value } = tag;
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('\n');
    if (tag.id === 36864) return Buffer.from(value).toString('hex'); // ExifVersion: UNDEFINED bytes
    const one = (v) => (Array.isArray(v) ? `${v[0]}/${v[1]}` : String(v));
    if (Array.isArray(value) && Array.isArray(value[0])) return value.map(one).join(', ');
    return one(value);
  };
  const out = {};
  for (const [name, tag] of Object.entries(ExifReader.load(Buffer.from(file)))) {
    if (typeof tag.id === 'number' && !pointers.has(tag.id)) out[name] = text(tag);
  }
  return out;
}

/** Decodes a PNG or JPEG file to `{ width, height, data }` (RGBA8). */
export function decode(name, file) {
  if (name.endsWith('.png')) {
    const { width, height, data } = PNG.sync.read(Buffer.from(file));
    return { width, height, data: new Uint8Array(data) };
  }
  const { width, height, data } = jpeg.decode(file, { useTArray: true, formatAsRGBA: true });
  return { width, height, data };
}

/**
 * What photo_proof should output for a file, computed independently:
 * multiformats + @noble/hashes for the CIDs, blockhash-core's
 * `bmvbhash(imageData, 8)` for the hash, pngjs or jpeg-js for the pixels.
 * So `pixelsCid` and `blockhash` hold exactly for PNG only: JPEG decoders
 * are not bit-exact, and a JPEG's proof names them in `decoderDependent`
 * (jpeg-js's values there, not what any Braid target gives).
 */
export function photoProof(name, file) {
  const proof = proofOf(file, decode(name, file));
  return name.endsWith('.png') ? proof : { ...proof, decoderDependent: DECODER_DEPENDENT };
}

/** The values of a JPEG's proof that depend on the decoder. */
export const DECODER_DEPENDENT = ['pixelsCid', 'blockhash'];

/** Bits that differ between two hex hashes of one length. */
export function hammingDistance(a, b) {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = parseInt(a[i], 16) ^ parseInt(b[i], 16);
    for (; x; x >>= 1) d += x & 1;
  }
  return d;
}
