//! `op_image_phash`: `op_image_decode::Image -> String`, a perceptual hash
//! of the image as 16 lowercase hex digits (64 bits, the first bit the
//! highest of the first digit), by config `algorithm`:
//!
//! - `blockhash` (the default): Rios's block mean value hash with 8 x 8
//!   blocks, computed exactly as blockhash-core's `bmvbhash(imageData, 8)`
//!   (what Anagolay's `image_phash` used), fractional blocks, transparent
//!   pixels counted as white and the median rule of its four bands
//!   included, in the same f64 arithmetic, so the digits are equal.
//! - `dhash`: the difference hash as Python's imagehash computes it, one
//!   bit per horizontally adjacent pair of a 9 x 8 grayscale thumbnail
//!   (left brighter than right is 0).
//! - `phash`: the DCT hash as imagehash computes it: the 8 x 8 lowest
//!   frequencies of the DCT-II of a 32 x 32 grayscale thumbnail, each bit
//!   whether the coefficient is above their median.
//!
//! dHash and pHash thumbnails come from `op_image_resize`'s Lanczos3 filter
//! (on RGBA, then luma as `op_image_gray`), not Pillow's resampler: they
//! agree with imagehash's hashes up to a few bits, not bit for bit.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use braid_support::{Config, Error};
use op_image_decode::Image;
use op_image_resize::{Filter, Size};

/// Hashes `image` with the algorithm config `algorithm` names.
#[braid_macros::operation(groups = ["IMAGE"], config(algorithm = ["blockhash", "dhash", "phash"]))]
pub async fn execute(image: &op_image_decode::Image, config: &Config) -> Result<String, Error> {
    image.check(OPERATION.name)?;
    // Any size blockhash-core hashes (an image of 17 x 1 too): blocks
    // smaller than a pixel take their fractions of each; dHash and pHash
    // resample to their thumbnails first.
    if image.width == 0 || image.height == 0 {
        return Err(Error::invalid_input(
            OPERATION.name,
            alloc::format!("the image is {} x {}: it has no pixels to hash", image.width, image.height),
        ));
    }
    let bits = match config.get("algorithm").unwrap_or("blockhash") {
        "blockhash" => blockhash(image),
        "dhash" => dhash(&luma(image, 9, 8, OPERATION.name)?),
        "phash" => phash(&luma(image, 32, 32, OPERATION.name)?),
        other => return Err(OPERATION.config_error("algorithm", other)),
    };
    Ok(hex(&bits))
}

/// `bits` (a multiple of 4) as hex digits, 4 bits a digit, high bit first.
fn hex(bits: &[bool]) -> String {
    bits.chunks(4)
        .map(|n| {
            let v = n.iter().fold(0u32, |acc, b| (acc << 1) | u32::from(*b));
            char::from_digit(v, 16).unwrap_or('0')
        })
        .collect()
}

/// A pixel's value for blockhash: the sum of its colour channels, 765
/// (white) when it is fully transparent.
fn value(px: &[u8]) -> f64 {
    if px[3] == 0 {
        765.0
    } else {
        f64::from(px[0]) + f64::from(px[1]) + f64::from(px[2])
    }
}

/// blockhash-core's `bmvbhash(data, 8)`, step for step.
pub fn blockhash(image: &Image) -> Vec<bool> {
    const BITS: usize = 8;
    let (w, h) = (image.width as usize, image.height as usize);
    let px = |x: usize, y: usize| value(&image.pixels[(y * w + x) * 4..(y * w + x) * 4 + 4]);
    if w % BITS == 0 && h % BITS == 0 {
        // bmvbhashEven: whole blocks, summed in integers.
        let (bx, by) = (w / BITS, h / BITS);
        let mut blocks = Vec::with_capacity(BITS * BITS);
        for y in 0..BITS {
            for x in 0..BITS {
                let mut total = 0.0;
                for iy in 0..by {
                    for ix in 0..bx {
                        total += px(x * bx + ix, y * by + iy);
                    }
                }
                blocks.push(total);
            }
        }
        return to_bits(&blocks, (bx * by) as f64);
    }
    let even_x = w % BITS == 0;
    let even_y = h % BITS == 0;
    let mut blocks = [[0f64; BITS]; BITS];
    let block_w = w as f64 / BITS as f64;
    let block_h = h as f64 / BITS as f64;
    // Which blocks a coordinate feeds, and with which weights.
    let split = |i: usize, size: usize, block: f64, even: bool| -> (usize, usize, f64, f64) {
        if even {
            let b = floor(i as f64 / block);
            return (b, b, 1.0, 0.0);
        }
        let m = (i as f64 + 1.0) % block;
        let frac = m - libm::floor(m);
        let int = m - frac;
        let (first, second) = if int > 0.0 || i + 1 == size {
            let b = floor(i as f64 / block);
            (b, b)
        } else {
            (floor(i as f64 / block), libm::ceil(i as f64 / block) as usize)
        };
        (first.min(BITS - 1), second.min(BITS - 1), 1.0 - frac, frac)
    };
    for y in 0..h {
        let (top, bottom, w_top, w_bottom) = split(y, h, block_h, even_y);
        for x in 0..w {
            let v = px(x, y);
            let (left, right, w_left, w_right) = split(x, w, block_w, even_x);
            blocks[top][left] += v * w_top * w_left;
            blocks[top][right] += v * w_top * w_right;
            blocks[bottom][left] += v * w_bottom * w_left;
            blocks[bottom][right] += v * w_bottom * w_right;
        }
    }
    let flat: Vec<f64> = blocks.iter().flatten().copied().collect();
    to_bits(&flat, block_w * block_h)
}

fn floor(v: f64) -> usize {
    (libm::floor(v) as usize).min(7)
}

/// blockhash-core's `translateBlocksToBits`: per band of a quarter of the
/// blocks, 1 where a block is brighter than the band's median (or equal
/// to it within 1 when the median is in the upper half of the range).
fn to_bits(blocks: &[f64], pixels_per_block: f64) -> Vec<bool> {
    let half = pixels_per_block * 256.0 * 3.0 / 2.0;
    let band = blocks.len() / 4;
    let mut bits = Vec::with_capacity(blocks.len());
    for chunk in blocks.chunks(band) {
        let m = median(chunk);
        bits.extend(chunk.iter().map(|v| *v > m || (libm::fabs(v - m) < 1.0 && m > half)));
    }
    bits
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 0 {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    } else {
        sorted[n / 2]
    }
}

/// A `width` x `height` grayscale thumbnail of `image`, row-major.
fn luma(image: &Image, width: u32, height: u32, operation: &str) -> Result<Vec<f64>, Error> {
    let small = op_image_resize::resize(
        image,
        Size { width, height },
        Filter::Lanczos3,
        op_image_resize::MAX_PIXELS,
        operation,
    )?;
    Ok(small.pixels.chunks_exact(4).map(|p| f64::from(op_image_gray::luma(p[0], p[1], p[2]))).collect())
}

/// imagehash's `dhash`: 9 x 8 thumbnail, a bit per pair, right brighter.
fn dhash(thumb: &[f64]) -> Vec<bool> {
    (0..8).flat_map(|y| (0..8).map(move |x| thumb[y * 9 + x + 1] > thumb[y * 9 + x])).collect()
}

/// imagehash's `phash`: the DCT-II of the 32 x 32 thumbnail's columns then
/// rows, the top-left 8 x 8 coefficients compared with their median.
fn phash(thumb: &[f64]) -> Vec<bool> {
    const N: usize = 32;
    // cos(pi k (2n + 1) / 2N) for the 8 frequencies kept.
    let basis: Vec<f64> = (0..8 * N)
        .map(|i| {
            let (k, n) = (i / N, i % N);
            libm::cos(core::f64::consts::PI * k as f64 * (2 * n + 1) as f64 / (2 * N) as f64)
        })
        .collect();
    // Along columns (axis 0): cols[k][x] for k < 8.
    let mut cols = [[0f64; N]; 8];
    for (k, row) in cols.iter_mut().enumerate() {
        for (x, out) in row.iter_mut().enumerate() {
            *out = 2.0 * (0..N).map(|y| thumb[y * N + x] * basis[k * N + y]).sum::<f64>();
        }
    }
    let mut low = Vec::with_capacity(64);
    for row in &cols {
        for k in 0..8 {
            low.push(2.0 * (0..N).map(|x| row[x] * basis[k * N + x]).sum::<f64>());
        }
    }
    let m = median(&low);
    low.iter().map(|v| *v > m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn gradient(width: u32, height: u32) -> Image {
        let mut pixels = Vec::new();
        for y in 0..height {
            for x in 0..width {
                let v = ((x * 255 / width.max(1)) ^ (y * 97 % 256)) as u8;
                pixels.extend_from_slice(&[v, v / 2, 255 - v, 255]);
            }
        }
        Image { width, height, pixels }
    }

    #[test]
    fn every_algorithm_gives_16_hex_digits() {
        for algorithm in ["blockhash", "dhash", "phash"] {
            for (w, h) in [(8, 8), (64, 48), (37, 19)] {
                let hash = execute_sync(&gradient(w, h), &config([("algorithm", algorithm)]).unwrap()).unwrap();
                assert_eq!(hash.len(), 16, "{algorithm} {w}x{h}: {hash}");
                assert!(hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{hash}");
            }
        }
    }

    #[test]
    fn a_blank_image_follows_blockhash_cores_median_rule() {
        // All white: every block equals the median, which is in the upper
        // half, so every bit is 1; all black: every bit 0.
        let white = Image { width: 16, height: 16, pixels: vec![255; 16 * 16 * 4] };
        assert_eq!(execute_sync(&white, &Config::new()).unwrap(), "ffffffffffffffff");
        let black = Image { width: 10, height: 10, pixels: [0, 0, 0, 255].repeat(100) };
        assert_eq!(execute_sync(&black, &Config::new()).unwrap(), "0000000000000000");
    }

    #[test]
    fn small_images_hash_and_malformed_ones_are_errors() {
        // Under 8 x 8 too, as blockhash-core (js/test/photo.test.mjs compares them).
        for algorithm in ["blockhash", "dhash", "phash"] {
            let config = config([("algorithm", algorithm)]).unwrap();
            for (w, h) in [(7, 20), (17, 1), (1, 1)] {
                let hash = execute_sync(&gradient(w, h), &config).unwrap();
                assert_eq!(hash.len(), 16, "{algorithm} {w} x {h}");
            }
        }
        let empty = Image { width: 0, height: 8, pixels: vec![] };
        assert!(execute_sync(&empty, &Config::new()).unwrap_err().to_string().contains("no pixels"));
        let broken = Image { width: 8, height: 8, pixels: vec![0; 10] };
        assert!(execute_sync(&broken, &Config::new()).is_err());
    }
}
