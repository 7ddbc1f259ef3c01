//! Every image operation on hostile files and images, natively: a grid of
//! PNGs (every colour type x bit depth x interlace x palette x
//! transparency, valid or not) and a few thousand seeded mutations of the
//! sample images (bytes flipped, files cut, chunks changed with their CRC
//! made right again, headers claiming other sizes) go through
//! `op_image_decode` and `op_exif`, and every image decoded (plus a few of
//! odd sizes) through `op_image_gray`, `op_image_resize`, `op_image_phash`
//! and `op_image_pixels`. No call may panic.
//!
//! The corpus and every answer are written to `target/image-fuzz/`
//! (`answers.json`): `js/test/image-fuzz.test.mjs` runs the same calls on
//! the operations' Wasm packages and requires the same answers, and no trap.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use braid_support::Config;
use op_image_decode::Image;
use op_image_resize::Size;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Mutations of the samples.
const MUTATIONS: usize = 3000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// xorshift64*: the same corpus on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn chunk(kind: &[u8], body: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(body);
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out.extend_from_slice(&crc.sum().to_be_bytes());
    out
}

/// The samples per channel of a PNG colour type.
fn channels(colour: u8) -> usize {
    match colour {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        _ => 4,
    }
}

/// A `width` x `height` PNG of random samples (palette indices may point
/// past the palette) with the given header, palette entries and `tRNS`.
fn png(
    rng: &mut Rng,
    (width, height): (u32, u32),
    colour: u8,
    depth: u8,
    interlace: bool,
    plte: Option<usize>,
    trns: Option<Vec<u8>>,
) -> Vec<u8> {
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[depth, colour, 0, 0, u8::from(interlace)]);
    // Adam7's passes: (x start, y start, x step, y step).
    let passes: &[(u32, u32, u32, u32)] = if interlace {
        &[(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    } else {
        &[(0, 0, 1, 1)]
    };
    let mut raw = Vec::new();
    for &(x0, y0, dx, dy) in passes {
        let (w, h) = (width.saturating_sub(x0).div_ceil(dx), height.saturating_sub(y0).div_ceil(dy));
        if w == 0 || h == 0 {
            continue;
        }
        let row_bytes = (w as usize * channels(colour) * depth as usize).div_ceil(8);
        for _ in 0..h {
            raw.push((rng.next() % 5) as u8); // every filter type
            raw.extend((0..row_bytes).map(|_| rng.next() as u8));
        }
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut z, &raw).unwrap();
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    if let Some(n) = plte {
        out.extend(chunk(b"PLTE", &(0..n * 3).map(|_| rng.next() as u8).collect::<Vec<_>>()));
    }
    if let Some(t) = trns {
        out.extend(chunk(b"tRNS", &t));
    }
    out.extend(chunk(b"IDAT", &z.finish().unwrap()));
    out.extend(chunk(b"IEND", &[]));
    out
}

/// Every colour type x bit depth (allowed or not) x interlace x palette x
/// transparency, 5 x 3 pixels (and a 17 x 1 and 1 x 9 of each valid one).
fn grid(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    for colour in [0u8, 2, 3, 4, 6] {
        for depth in [1u8, 2, 4, 8, 16] {
            for interlace in [false, true] {
                for plte in [None, Some(2), Some(256)] {
                    let trns_options: Vec<Option<Vec<u8>>> = vec![
                        None,
                        Some(match colour {
                            0 => vec![0, 1],
                            2 => vec![0, 1, 0, 2, 0, 3],
                            _ => vec![128; 2],
                        }),
                    ];
                    for trns in trns_options {
                        files.push(png(rng, (5, 3), colour, depth, interlace, plte, trns.clone()));
                        if plte != Some(256) && trns.is_none() {
                            files.push(png(rng, (17, 1), colour, depth, interlace, plte, None));
                            files.push(png(rng, (1, 9), colour, depth, interlace, plte, None));
                        }
                    }
                }
            }
        }
    }
    files
}

/// The PNG's chunks: (offset, length, type).
fn png_chunks(file: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 8;
    while at + 12 <= file.len() {
        let len = u32::from_be_bytes(file[at..at + 4].try_into().unwrap()) as usize;
        if at + 12 + len > file.len() {
            break;
        }
        out.push((at, len));
        at += 12 + len;
    }
    out
}

/// The CRC of the chunk at `at` made right again.
fn fix_crc(file: &mut [u8], at: usize, len: usize) {
    let mut crc = flate2::Crc::new();
    crc.update(&file[at + 4..at + 8 + len]);
    file[at + 8 + len..at + 12 + len].copy_from_slice(&crc.sum().to_be_bytes());
}

fn mutate(rng: &mut Rng, sample: &[u8]) -> Vec<u8> {
    let mut file = sample.to_vec();
    let is_png = file.starts_with(b"\x89PNG");
    match rng.below(6) {
        // Bytes flipped anywhere.
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(file.len());
                file[i] ^= 1 << rng.below(8);
            }
        }
        // Cut short.
        1 => file.truncate(rng.below(file.len())),
        // A byte of a chunk (or of a JPEG's first kilobyte, its headers) changed, CRC made right.
        2 | 3 if is_png => {
            let chunks = png_chunks(&file);
            let (at, len) = chunks[rng.below(chunks.len())];
            if len > 0 {
                let i = at + 8 + rng.below(len);
                file[i] = rng.next() as u8;
            }
            fix_crc(&mut file, at, len);
        }
        2 | 3 => {
            let i = rng.below(file.len().min(1024));
            file[i] = rng.next() as u8;
        }
        // The header claims another size (PNG: IHDR; JPEG: the first SOF).
        4 => {
            let (w, h) = [(1u32, 1u32), (0, 7), (8000, 8000), (1, 200_000_000), (65_535, 3), (17, 1)][rng.below(6)];
            if is_png {
                file[16..20].copy_from_slice(&w.to_be_bytes());
                file[20..24].copy_from_slice(&h.to_be_bytes());
                fix_crc(&mut file, 8, 13);
            } else if let Some(sof) = file.windows(2).position(|m| m == [0xff, 0xc0] || m == [0xff, 0xc2]) {
                if sof + 9 <= file.len() {
                    file[sof + 5..sof + 7].copy_from_slice(&(h.min(65_535) as u16).to_be_bytes());
                    file[sof + 7..sof + 9].copy_from_slice(&(w.min(65_535) as u16).to_be_bytes());
                }
            }
        }
        // A chunk or run of bytes repeated or dropped.
        _ => {
            let a = rng.below(file.len());
            let b = (a + 1 + rng.below(64)).min(file.len());
            let piece = file[a..b].to_vec();
            if rng.below(2) == 0 {
                file.splice(a..a, piece);
            } else {
                file.drain(a..b);
            }
        }
    }
    file
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// An answer as both sides write it: `ok:` and a digest of the output, or
/// `err:` and the error's text; a panic fails the test.
fn answer<T>(
    what: &str,
    call: impl FnOnce() -> Result<T, braid_support::Error>,
    digest: impl Fn(&T) -> String,
) -> (String, Option<T>) {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(value)) => (format!("ok:{}", digest(&value)), Some(value)),
        Ok(Err(e)) => (format!("err:{e}"), None),
        Err(_) => panic!("{what} panicked"),
    }
}

fn image_digest(image: &Image) -> String {
    format!("{}x{}:{}", image.width, image.height, sha256(&image.pixels))
}

/// A config of these pairs (sorted by key, as configs keep them).
fn config(pairs: &[(&'static str, &'static str)]) -> Config {
    let mut pairs = pairs.to_vec();
    pairs.sort();
    Config::from_static(Box::leak(pairs.into_boxed_slice()))
}

/// The sizes each image is resized to, and their filters.
const RESIZES: [(u32, u32, &str); 4] =
    [(1, 1, "triangle"), (3, 2, "lanczos3"), (17, 1, "catmullrom"), (1, 300, "nearest")];

/// Every operation taking an image, on `image`: answers in a fixed order.
fn image_answers(label: &str, image: &Image) -> Value {
    let gray = answer(&format!("{label} gray"), || op_image_gray::execute_sync(image, &Config::new()), image_digest).0;
    let resize: Vec<String> = RESIZES
        .iter()
        .map(|&(width, height, filter)| {
            let size = Size { width, height };
            let config = config(&[("filter", filter), ("max_megapixels", "1")]);
            answer(&format!("{label} resize"), || op_image_resize::execute_sync(image, &size, &config), image_digest).0
        })
        .collect();
    let phash: Vec<String> = ["blockhash", "dhash", "phash"]
        .iter()
        .map(|&algorithm| {
            let config = config(&[("algorithm", algorithm)]);
            answer(&format!("{label} phash"), || op_image_phash::execute_sync(image, &config), |h: &String| h.clone()).0
        })
        .collect();
    let pixels =
        answer(&format!("{label} pixels"), || op_image_pixels::execute_sync(image, &Config::new()), |b| sha256(b)).0;
    json!({ "gray": gray, "resize": resize, "phash": phash, "pixels": pixels })
}

#[test]
fn every_image_operation_answers_hostile_files_and_images_without_panicking() {
    let out = root().join("target/image-fuzz");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(out.join("corpus")).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let samples: Vec<Vec<u8>> = ["photo.png", "alpha.png", "gray.png", "photo.jpg", "exif.jpg", "large.jpg"]
        .iter()
        .map(|name| std::fs::read(root().join("workflows/samples/images").join(name)).unwrap())
        .collect();
    let mut files = grid(&mut rng);
    let grid_len = files.len();
    for i in 0..MUTATIONS {
        files.push(mutate(&mut rng, &samples[i % samples.len()]));
    }
    let decode_config = config(&[("max_megapixels", "1")]);
    let mut cases = Vec::new();
    let mut decoded = 0;
    for (i, file) in files.iter().enumerate() {
        let name = format!("{i:05}.bin");
        std::fs::write(out.join("corpus").join(&name), file).unwrap();
        let label = format!("case {name}");
        let (decode, image) =
            answer(&format!("{label} decode"), || op_image_decode::execute_sync(file, &decode_config), image_digest);
        let exif =
            answer(&format!("{label} exif"), || op_exif::execute_sync(file, &Config::new()), |_| String::new()).0;
        let images = image.as_ref().map(|image| {
            decoded += 1;
            image_answers(&label, image)
        });
        cases.push(json!({ "file": name, "decode": decode, "exif": exif, "image": images }));
    }
    // Images no file makes: odd sizes, one pixel, and pixels that do not match the size.
    // (Their pixels are `synthetic-N.rgba` in the corpus.)
    let mut synthetic = Vec::new();
    let sizes = [
        (1u32, 1u32, 4usize),
        (17, 1, 68),
        (1, 17, 68),
        (7, 7, 196),
        (8, 8, 256),
        (9, 300, 10_800),
        (0, 5, 0),
        (4, 4, 7),
    ];
    for (i, (width, height, len)) in sizes.into_iter().enumerate() {
        let pixels: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let name = format!("synthetic-{i}.rgba");
        std::fs::write(out.join("corpus").join(&name), &pixels).unwrap();
        let image = Image { width, height, pixels };
        synthetic
            .push(json!({ "file": name, "width": width, "height": height, "image": image_answers(&name, &image) }));
    }
    let answers = json!({ "grid": grid_len, "cases": cases, "synthetic": synthetic, "seed": rng.next() });
    std::fs::write(out.join("answers.json"), serde_json::to_vec_pretty(&answers).unwrap()).unwrap();
    // The corpus reaches past the decoders' first checks.
    assert!(decoded > 300, "only {decoded} of {} files decoded: the mutations are too blunt", files.len());
}
