//! `op_image_pixels`: `op_image_decode::Image -> Bytes`, the image's RGBA8
//! pixels, row-major, without padding (`ImageData.data`'s layout): what a
//! content id of the pixels, rather than of the file, hashes.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Bytes, Config, Error};

/// The pixels of `image`, borrowed from it: the next step of a segment
/// reads them where they lie (hashing them copies nothing).
#[braid_macros::operation(groups = ["IMAGE"])]
pub async fn execute<'a>(image: &'a op_image_decode::Image, config: &Config) -> Result<&'a Bytes, Error> {
    let _ = config;
    image.check(OPERATION.name)?;
    Ok(&image.pixels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use op_image_decode::Image;

    #[test]
    fn the_pixels_as_they_are() {
        let image = Image { width: 1, height: 2, pixels: vec![1, 2, 3, 4, 5, 6, 7, 8] };
        assert_eq!(*execute_sync(&image, &Config::new()).unwrap(), image.pixels);
        let broken = Image { width: 2, height: 2, pixels: vec![0; 4] };
        assert!(execute_sync(&broken, &Config::new()).is_err());
    }
}
