//! `op_image_resize`: `(op_image_decode::Image, op_image_resize::Size) ->
//! op_image_decode::Image`, the image resampled to `size` with the filter
//! of config `filter`: `triangle` (bilinear), `nearest`, `catmullrom`
//! (bicubic) or `lanczos3`. Separable convolution, the filter widened by
//! the scale factor when shrinking so every source pixel counts (as the
//! `image` crate and Pillow do); channels are resampled independently,
//! alpha included, with weights normalised per output pixel.
//!
//! Its cost is bounded by what the caller sees: the output has at most
//! config `max_megapixels` million pixels (checked before anything is
//! allocated), the work is proportional to the pixels in and out times the
//! filter's reach, and every buffer is reserved fallibly, so a size over
//! what memory holds is an error, never a trap.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;

use braid_support::{Config, Error};
use op_image_decode::Image;

/// The largest image this operation can make: 256 million pixels, as
/// `op_image_decode`'s largest limit (config `max_megapixels` = 256).
pub const MAX_PIXELS: u64 = 256_000_000;

/// The size to resize to, in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, braid_macros::Value)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

/// A resampling filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Nearest,
    Triangle,
    CatmullRom,
    Lanczos3,
}

impl Filter {
    /// The filter config `filter` names.
    pub fn from_config(value: &str) -> Option<Self> {
        Some(match value {
            "triangle" => Self::Triangle,
            "nearest" => Self::Nearest,
            "catmullrom" => Self::CatmullRom,
            "lanczos3" => Self::Lanczos3,
            _ => return None,
        })
    }

    /// How far from its centre the kernel reaches, in source pixels at
    /// scale 1.
    fn support(self) -> f32 {
        match self {
            Self::Nearest => 0.0,
            Self::Triangle => 1.0,
            Self::CatmullRom => 2.0,
            Self::Lanczos3 => 3.0,
        }
    }

    fn kernel(self, x: f32) -> f32 {
        let x = x.abs();
        match self {
            Self::Nearest => 1.0,
            Self::Triangle => (1.0 - x).max(0.0),
            Self::CatmullRom => {
                // Keys' cubic with a = -0.5.
                if x < 1.0 {
                    1.5 * x * x * x - 2.5 * x * x + 1.0
                } else if x < 2.0 {
                    -0.5 * x * x * x + 2.5 * x * x - 4.0 * x + 2.0
                } else {
                    0.0
                }
            }
            Self::Lanczos3 => {
                if x < 1e-6 {
                    1.0
                } else if x < 3.0 {
                    let px = core::f32::consts::PI * x;
                    3.0 * libm::sinf(px) * libm::sinf(px / 3.0) / (px * px)
                } else {
                    0.0
                }
            }
        }
    }
}

/// Resizes `image` to `size` with the filter config `filter` names, to at
/// most config `max_megapixels` million pixels.
#[braid_macros::operation(
    groups = ["IMAGE"],
    config(filter = ["triangle", "nearest", "catmullrom", "lanczos3"], max_megapixels = ["64", "16", "256", "1"])
)]
pub async fn execute(
    image: &op_image_decode::Image,
    size: &Size,
    config: &Config,
) -> Result<op_image_decode::Image, Error> {
    let value = config.get("filter").unwrap_or("triangle");
    let filter = Filter::from_config(value).ok_or_else(|| OPERATION.config_error("filter", value))?;
    let megapixels = config.get("max_megapixels").unwrap_or("64");
    let max_pixels = match megapixels {
        "1" | "16" | "64" | "256" => megapixels.parse::<u64>().unwrap_or(64) * 1_000_000,
        other => return Err(OPERATION.config_error("max_megapixels", other)),
    };
    resize(image, *size, filter, max_pixels, OPERATION.name)
}

/// `image` resampled to `size` (at most `max_pixels` pixels, and
/// [`MAX_PIXELS`]) with `filter`; errors name `operation`.
pub fn resize(image: &Image, size: Size, filter: Filter, max_pixels: u64, operation: &str) -> Result<Image, Error> {
    image.check(operation)?;
    let max_pixels = max_pixels.min(MAX_PIXELS);
    let pixels = u64::from(size.width) * u64::from(size.height);
    if pixels == 0 || pixels > max_pixels {
        return Err(Error::invalid_input(
            operation,
            format!(
                "cannot resize to {} x {}: the size must have 1 to {max_pixels} pixels (config max_megapixels)",
                size.width, size.height
            ),
        ));
    }
    if image.width == 0 || image.height == 0 {
        return Err(Error::invalid_input(operation, "the image has no pixels to resample".into()));
    }
    let (sw, sh) = (image.width as usize, image.height as usize);
    let (dw, dh) = (size.width as usize, size.height as usize);
    let columns = Taps::new(sw, dw, filter, operation)?;
    let rows = Taps::new(sh, dh, filter, operation)?;
    // Horizontal pass: sh rows of dw pixels, in f32.
    let mut wide = Vec::new();
    wide.try_reserve_exact(sh * dw * 4).map_err(|_| too_big(operation))?;
    for y in 0..sh {
        let row = &image.pixels[y * sw * 4..(y + 1) * sw * 4];
        for x in 0..dw {
            let (first, weights) = columns.of(x);
            let mut acc = [0f32; 4];
            for (px, w) in row[first * 4..].chunks_exact(4).zip(weights) {
                for c in 0..4 {
                    acc[c] += f32::from(px[c]) * w;
                }
            }
            wide.extend_from_slice(&acc);
        }
    }
    // Vertical pass.
    let mut out = Image::alloc(dw * dh * 4, operation)?;
    for (y, line) in out.chunks_exact_mut(dw * 4).enumerate() {
        let (first, weights) = rows.of(y);
        for (x, px) in line.chunks_exact_mut(4).enumerate() {
            let mut acc = [0f32; 4];
            for (i, w) in weights.iter().enumerate() {
                let at = ((first + i) * dw + x) * 4;
                let src = &wide[at..at + 4];
                for c in 0..4 {
                    acc[c] += src[c] * w;
                }
            }
            for c in 0..4 {
                px[c] = (acc[c] + 0.5).clamp(0.0, 255.0) as u8;
            }
        }
    }
    Ok(Image { width: size.width, height: size.height, pixels: out })
}

fn too_big(operation: &str) -> Error {
    Error::invalid_input(operation, "the resized image needs more memory than there is room for".into())
}

/// The weights of each of `dst` output pixels resampled from `src` source
/// pixels along one axis: output `o` takes the source pixels from
/// `spans[o].0` on, one weight each, in two flat buffers reserved fallibly
/// (one allocation per output pixel would cost more than the pixels).
struct Taps {
    spans: Vec<(usize, usize, usize)>,
    weights: Vec<f32>,
}

impl Taps {
    fn new(src: usize, dst: usize, filter: Filter, operation: &str) -> Result<Self, Error> {
        let ratio = src as f32 / dst as f32;
        let scale = ratio.max(1.0);
        let support = filter.support() * scale;
        let mut spans = Vec::new();
        spans.try_reserve_exact(dst).map_err(|_| too_big(operation))?;
        // Each output reaches at most 2 * support + 2 source pixels.
        let reach = (libm::ceilf(2.0 * support) as usize + 2).min(src);
        let mut weights = Vec::new();
        weights.try_reserve_exact(dst.saturating_mul(reach)).map_err(|_| too_big(operation))?;
        for o in 0..dst {
            let center = (o as f32 + 0.5) * ratio;
            let nearest = (center as usize).min(src - 1);
            let start = weights.len();
            let (left, right) = if filter == Filter::Nearest {
                (nearest, nearest + 1)
            } else {
                let left = (libm::floorf(center - support).max(0.0) as usize).min(src - 1);
                (left, (libm::ceilf(center + support) as usize).clamp(left + 1, src))
            };
            let right = right.min(left + reach);
            weights.extend((left..right).map(|i| match filter {
                Filter::Nearest => 1.0,
                _ => filter.kernel((i as f32 + 0.5 - center) / scale),
            }));
            let sum: f32 = weights[start..].iter().sum();
            if sum == 0.0 {
                // A kernel that misses every pixel: take the nearest.
                weights.truncate(start);
                weights.push(1.0);
                spans.push((nearest, start, 1));
                continue;
            }
            weights[start..].iter_mut().for_each(|w| *w /= sum);
            spans.push((left, start, right - left));
        }
        Ok(Self { spans, weights })
    }

    /// The first source pixel of output `o` and its weights.
    fn of(&self, o: usize) -> (usize, &[f32]) {
        let (first, start, len) = self.spans[o];
        (first, &self.weights[start..start + len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn solid(width: u32, height: u32, px: [u8; 4]) -> Image {
        Image { width, height, pixels: px.repeat((width * height) as usize) }
    }

    #[test]
    fn a_solid_image_stays_solid_with_every_filter() {
        for filter in ["triangle", "nearest", "catmullrom", "lanczos3"] {
            let config = config([("filter", filter)]).unwrap();
            for size in [Size { width: 3, height: 5 }, Size { width: 40, height: 1 }] {
                let out = execute_sync(&solid(17, 9, [10, 200, 30, 255]), &size, &config).unwrap();
                assert_eq!(out, solid(size.width, size.height, [10, 200, 30, 255]), "{filter} {size:?}");
            }
        }
    }

    #[test]
    fn shrinking_by_two_with_triangle_averages_pairs() {
        // 4 x 1: 0, 100, 200, 40 -> 2 x 1. Triangle widened to 2 pixels:
        // weights 1/8, 3/8, 3/8, 1/8 around each centre, clipped at the edges.
        let pixels: Vec<u8> = [0u8, 100, 200, 40].iter().flat_map(|v| [*v, *v, *v, 255]).collect();
        let image = Image { width: 4, height: 1, pixels };
        let out = execute_sync(&image, &Size { width: 2, height: 1 }, &config([]).unwrap()).unwrap();
        // (0*3 + 100*3 + 200*1) / 7 = 71.4; (100*1 + 200*3 + 40*3) / 7 = 117.1
        assert_eq!(&out.pixels[..4], &[71, 71, 71, 255]);
        assert_eq!(&out.pixels[4..], &[117, 117, 117, 255]);
    }

    #[test]
    fn the_output_limit_is_the_configs() {
        let image = solid(1, 1, [9, 9, 9, 9]);
        let tall = Size { width: 1, height: 2_000_000 };
        let e = execute_sync(&image, &tall, &config([("max_megapixels", "1")]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("1 to 1000000 pixels (config max_megapixels)"), "{e}");
        let out = execute_sync(&image, &tall, &config([("max_megapixels", "16")]).unwrap()).unwrap();
        assert_eq!(out.pixels.len(), 8_000_000);
        assert!(out.pixels.iter().all(|&b| b == 9));
    }

    #[test]
    fn nearest_picks_source_pixels() {
        let pixels: Vec<u8> = (0..4u8).flat_map(|v| [v, v, v, v]).collect();
        let image = Image { width: 4, height: 1, pixels };
        let out =
            execute_sync(&image, &Size { width: 2, height: 1 }, &config([("filter", "nearest")]).unwrap()).unwrap();
        assert_eq!(out.pixels, vec![1, 1, 1, 1, 3, 3, 3, 3]);
    }

    #[test]
    fn bad_sizes_and_images_are_errors() {
        let image = solid(2, 2, [0; 4]);
        // Over the default 64 megapixels (1 x 200,000,000 trapped before
        // the limit was the caller's to see), and over every limit.
        let sizes = [
            Size { width: 0, height: 4 },
            Size { width: 100_000, height: 100_000 },
            Size { width: 1, height: 200_000_000 },
        ];
        for size in sizes {
            let e = execute_sync(&image, &size, &Config::new()).unwrap_err().to_string();
            assert!(e.contains("cannot resize to") && e.contains("op_image_resize"), "{e}");
        }
        let broken = Image { width: 2, height: 2, pixels: vec![0; 3] };
        assert!(execute_sync(&broken, &Size { width: 1, height: 1 }, &Config::new()).is_err());
        let empty = Image { width: 0, height: 5, pixels: vec![] };
        assert!(execute_sync(&empty, &Size { width: 1, height: 1 }, &Config::new()).is_err());
    }
}
