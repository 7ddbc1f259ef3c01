//! Known answers: the sample images of `workflows/samples/images/` decode to
//! what independent decoders (pngjs, jpeg-js; `js/lib/images.mjs`) make of
//! them: exactly for PNG, within a tolerance for JPEG (decoders differ in
//! their IDCT and upsampling, so JPEG is never compared bit for bit). Bad,
//! truncated and oversized files are errors.

use braid_support::Error;
use op_image_decode::{config, execute_sync, Image};

fn sample(name: &str) -> Vec<u8> {
    let path = format!("{}/../../workflows/samples/images/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn decode(bytes: &[u8]) -> Result<Image, Error> {
    execute_sync(&bytes.to_vec(), &config([]).unwrap())
}

#[test]
fn png_pixels_equal_pngjs() {
    for (name, width, height) in [("photo.png", 64, 48), ("alpha.png", 33, 17), ("gray.png", 40, 30)] {
        let image = decode(&sample(name)).unwrap();
        assert_eq!((image.width, image.height), (width, height), "{name}");
        assert!(image.pixels == sample(&format!("{name}.rgba")), "{name}: pixels differ from pngjs's");
    }
}

#[test]
fn jpeg_pixels_are_within_a_tolerance_of_jpeg_js() {
    for (name, width, height) in [("photo.jpg", 64, 48), ("large.jpg", 160, 120)] {
        let image = decode(&sample(name)).unwrap();
        assert_eq!((image.width, image.height), (width, height), "{name}");
        let reference = sample(&format!("{name}.rgba"));
        assert_eq!(image.pixels.len(), reference.len(), "{name}");
        let diffs: Vec<u32> = image.pixels.iter().zip(&reference).map(|(a, b)| u32::from(a.abs_diff(*b))).collect();
        let mean = diffs.iter().sum::<u32>() as f64 / diffs.len() as f64;
        let max = diffs.iter().max().copied().unwrap_or(0);
        assert!(mean < 1.5 && max <= 24, "{name}: mean difference {mean:.2}, max {max}");
        assert!(image.pixels.chunks(4).all(|p| p[3] == 255), "{name}: JPEG pixels are opaque");
    }
}

#[test]
fn bad_truncated_and_oversized_files_are_errors() {
    let message = |bytes: &[u8]| decode(bytes).unwrap_err().to_string();
    assert!(message(b"GIF89a....").contains("not a PNG or JPEG file"), "{}", message(b"GIF89a"));
    assert!(message(b"").contains("not a PNG or JPEG file"));
    for name in ["photo.png", "alpha.png", "photo.jpg", "large.jpg"] {
        let file = sample(name);
        for cut in [8, 20, 33, file.len() / 2, file.len() - 12] {
            let result = decode(&file[..cut]);
            assert!(result.is_err(), "{name} cut at {cut} of {} decoded", file.len());
        }
        // A corrupt byte in the middle: an error or an image, never a panic.
        let mut corrupt = file.clone();
        corrupt[file.len() / 2] ^= 0x55;
        let _ = decode(&corrupt);
    }
    // A PNG header claiming 100000 x 100000 pixels: refused before decoding.
    let mut huge = sample("photo.png");
    huge[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    huge[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    let crc = crc32(&huge[12..29]); // the IHDR chunk's type and data
    huge[29..33].copy_from_slice(&crc.to_be_bytes());
    let e = message(&huge);
    assert!(e.contains("100000x100000") && e.contains("over the limit of 64 megapixels"), "{e}");
    let small = execute_sync(&sample("large.jpg"), &config([("max_megapixels", "1")]).unwrap());
    assert!(small.is_ok(), "160x120 is under a megapixel");
    assert!(config([("max_megapixels", "2")]).is_err(), "only the declared limits");
}

/// CRC-32 (ISO-HDLC), as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}
