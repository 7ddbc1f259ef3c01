//! `op_image_resize`: `(op_image_decode::Image, op_image_resize::Size) ->
//! op_image_decode::Image`, the image resampled to `size` with the filter
//! of config `filter`: `triangle` (bilinear), `nearest`, `catmullrom`
//! (bicubic) or `lanczos3`. Separable convolution, the filter widened by
//! the scale factor when shrinking so every source pixel counts (as the
//! `image` crate and Pillow do); channels are resampled independently,
//! alpha included, with weights normalised per output pixel.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;

use braid_support::{Config, Error};
use op_image_decode::Image;

/// The largest image this operation makes: 256 million pixels, as
/// `op_image_decode`'s largest limit.
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

/// Resizes `image` to `size` with the filter config `filter` names.
#[braid_macros::operation(groups = ["IMAGE"], config(filter = ["triangle", "nearest", "catmullrom", "lanczos3"]))]
pub async fn execute(
    image: &op_image_decode::Image,
    size: &Size,
    config: &Config,
) -> Result<op_image_decode::Image, Error> {
    let value = config.get("filter").unwrap_or("triangle");
    let filter = Filter::from_config(value).ok_or_else(|| OPERATION.config_error("filter", value))?;
    resize(image, *size, filter, OPERATION.name)
}

/// `image` resampled to `size` with `filter`; errors name `operation`.
pub fn resize(image: &Image, size: Size, filter: Filter, operation: &str) -> Result<Image, Error> {
    image.check(operation)?;
    let pixels = u64::from(size.width) * u64::from(size.height);
    if pixels == 0 || pixels > MAX_PIXELS {
        return Err(Error::invalid_input(
            operation,
            format!("cannot resize to {} x {}: the size must have 1 to {MAX_PIXELS} pixels", size.width, size.height),
        ));
    }
    if image.width == 0 || image.height == 0 {
        return Err(Error::invalid_input(operation, "the image has no pixels to resample".into()));
    }
    let (sw, sh) = (image.width as usize, image.height as usize);
    let (dw, dh) = (size.width as usize, size.height as usize);
    let columns = weights(sw, dw, filter);
    let rows = weights(sh, dh, filter);
    // Horizontal pass: sh rows of dw pixels, in f32.
    let mut wide = Vec::new();
    wide.try_reserve_exact(sh * dw * 4).map_err(|_| too_big(operation))?;
    for y in 0..sh {
        let row = &image.pixels[y * sw * 4..(y + 1) * sw * 4];
        for taps in &columns {
            let mut acc = [0f32; 4];
            for (i, w) in taps.iter() {
                let px = &row[i * 4..i * 4 + 4];
                for c in 0..4 {
                    acc[c] += f32::from(px[c]) * w;
                }
            }
            wide.extend_from_slice(&acc);
        }
    }
    // Vertical pass.
    let mut out = Image::alloc(dw * dh * 4, operation)?;
    for (y, taps) in rows.iter().enumerate() {
        let line = &mut out[y * dw * 4..(y + 1) * dw * 4];
        for (x, px) in line.chunks_exact_mut(4).enumerate() {
            let mut acc = [0f32; 4];
            for (i, w) in taps.iter() {
                let src = &wide[(i * dw + x) * 4..(i * dw + x) * 4 + 4];
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

/// The source pixels and weights of each of `dst` output pixels resampled
/// from `src`.
fn weights(src: usize, dst: usize, filter: Filter) -> Vec<Vec<(usize, f32)>> {
    let ratio = src as f32 / dst as f32;
    let scale = ratio.max(1.0);
    let support = filter.support() * scale;
    (0..dst)
        .map(|o| {
            let center = (o as f32 + 0.5) * ratio;
            if filter == Filter::Nearest {
                return alloc::vec![((center as usize).min(src - 1), 1.0)];
            }
            let left = libm::floorf(center - support).max(0.0) as usize;
            let right = (libm::ceilf(center + support) as usize).min(src);
            let mut taps: Vec<(usize, f32)> = (left..right)
                .map(|i| (i, filter.kernel((i as f32 + 0.5 - center) / scale)))
                .filter(|(_, w)| *w != 0.0)
                .collect();
            let sum: f32 = taps.iter().map(|(_, w)| w).sum();
            if sum == 0.0 {
                // A kernel that misses every pixel: take the nearest.
                return alloc::vec![((center as usize).min(src - 1), 1.0)];
            }
            taps.iter_mut().for_each(|(_, w)| *w /= sum);
            taps
        })
        .collect()
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
        for size in [Size { width: 0, height: 4 }, Size { width: 100_000, height: 100_000 }] {
            let e = execute_sync(&image, &size, &Config::new()).unwrap_err().to_string();
            assert!(e.contains("cannot resize to") && e.contains("op_image_resize"), "{e}");
        }
        let broken = Image { width: 2, height: 2, pixels: vec![0; 3] };
        assert!(execute_sync(&broken, &Size { width: 1, height: 1 }, &Config::new()).is_err());
        let empty = Image { width: 0, height: 5, pixels: vec![] };
        assert!(execute_sync(&empty, &Size { width: 1, height: 1 }, &Config::new()).is_err());
    }
}
