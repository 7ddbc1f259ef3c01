//! `op_image_gray`: `op_image_decode::Image -> op_image_decode::Image`, the
//! image in grayscale: each pixel's luma in its red, green and blue
//! channels, its alpha kept. Luma is ITU-R BT.601's, rounded as Pillow's
//! `convert("L")` rounds it (`(19595 R + 38470 G + 7471 B + 32768) >> 16`),
//! so a gray image here equals Pillow's.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Config, Error};
use op_image_decode::Image;

/// Converts `image` to grayscale.
#[braid_macros::operation(groups = ["IMAGE"])]
pub async fn execute(image: &op_image_decode::Image, config: &Config) -> Result<op_image_decode::Image, Error> {
    let _ = config;
    image.check(OPERATION.name)?;
    let mut pixels = image.pixels.clone();
    for px in pixels.chunks_exact_mut(4) {
        let l = luma(px[0], px[1], px[2]);
        px[..3].fill(l);
    }
    Ok(Image { width: image.width, height: image.height, pixels })
}

/// BT.601 luma in fixed point, as Pillow computes it.
pub fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((19595 * u32::from(r) + 38470 * u32::from(g) + 7471 * u32::from(b) + 0x8000) >> 16) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn luma_is_pillows() {
        // Pillow: Image.new("RGB", (1, 1), c).convert("L").getpixel((0, 0)).
        for (rgb, l) in [
            ((255, 255, 255), 255),
            ((0, 0, 0), 0),
            ((255, 0, 0), 76),
            ((0, 255, 0), 150),
            ((0, 0, 255), 29),
            ((12, 200, 99), 132),
        ] {
            assert_eq!(luma(rgb.0, rgb.1, rgb.2), l, "{rgb:?}");
        }
    }

    #[test]
    fn keeps_alpha_and_size() {
        let image = Image { width: 2, height: 1, pixels: vec![255, 0, 0, 7, 0, 0, 255, 255] };
        let gray = execute_sync(&image, &Config::new()).unwrap();
        assert_eq!(gray, Image { width: 2, height: 1, pixels: vec![76, 76, 76, 7, 29, 29, 29, 255] });
    }

    #[test]
    fn a_malformed_image_is_an_error() {
        let image = Image { width: 3, height: 1, pixels: vec![0; 8] };
        let e = execute_sync(&image, &Config::new()).unwrap_err().to_string();
        assert!(e.contains("3 x 1") && e.contains("12 bytes") && e.contains("not 8"), "{e}");
    }
}
