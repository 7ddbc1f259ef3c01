//! `op_image_decode`: `Bytes -> op_image_decode::Image`. Decodes a PNG
//! (8 or 16 bits, any colour type, palette and transparency included; 16-bit
//! samples keep their high byte) or a baseline or progressive JPEG (8 bits,
//! grayscale, YCbCr or CMYK) with zune-png and zune-jpeg, which build
//! `no_std`. The [`Image`] holds RGBA8 pixels, row-major, without padding:
//! the layout of a browser's `ImageData.data`, whatever the file held.
//!
//! Untrusted files are errors, never traps: anything that is not a PNG or
//! JPEG, a truncated or corrupt file, and an image over the pixel limit
//! (`max_megapixels`, checked from the header before anything is decoded).
//! The pixels' memory is reserved fallibly before decoding, so an image that
//! does not fit in memory is an error too.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;

use braid_support::{Bytes, Config, Error};
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;

/// A decoded image: `width` x `height` pixels of 4 bytes each (red, green,
/// blue, alpha), row after row. `pixels.len() == width * height * 4`.
#[derive(Clone, Debug, PartialEq, Eq, braid_macros::Value)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Image {
    /// Checks that `pixels` holds exactly `width * height` RGBA8 pixels:
    /// the operations taking an image call it first, as an image made
    /// elsewhere (a JS object) may not. `operation` names the caller.
    pub fn check(&self, operation: &str) -> Result<(), Error> {
        let want = u64::from(self.width) * u64::from(self.height) * 4;
        if self.pixels.len() as u64 != want {
            return Err(Error::invalid_input(
                operation,
                format!(
                    "an image of {} x {} pixels holds {want} bytes of RGBA8 pixels, not {}",
                    self.width,
                    self.height,
                    self.pixels.len()
                ),
            ));
        }
        Ok(())
    }

    /// `len` zero bytes for an image's pixels, reserved fallibly: an error
    /// naming `operation`, not an abort, when memory has no room for them.
    pub fn alloc(len: usize, operation: &str) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|_| {
            Error::invalid_input(operation, format!("the image needs {len} bytes, more than memory has room for"))
        })?;
        out.resize(len, 0);
        Ok(out)
    }
}

/// The file formats this operation reads, by their first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Png,
    Jpeg,
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
const JPEG_SIGNATURE: &[u8] = b"\xff\xd8\xff";

/// The longest side of a JPEG this operation decodes: the largest multiple
/// of 8 below 65,536 (zune-jpeg overflows on the rest).
const JPEG_MAX_SIDE: usize = 65_528;

/// Decodes a PNG or JPEG file to RGBA8 pixels.
#[braid_macros::operation(groups = ["IMAGE"], config(max_megapixels = ["64", "16", "256", "1"]))]
pub async fn execute(input: &Bytes, config: &Config) -> Result<Image, Error> {
    let megapixels = config.get("max_megapixels").unwrap_or("64");
    let max_pixels = match megapixels {
        // Megapixels as cameras count them: millions of pixels.
        "1" | "16" | "64" | "256" => megapixels.parse::<u64>().unwrap_or(64) * 1_000_000,
        other => return Err(OPERATION.config_error("max_megapixels", other)),
    };
    let format = if input.starts_with(PNG_SIGNATURE) {
        Format::Png
    } else if input.starts_with(JPEG_SIGNATURE) {
        Format::Jpeg
    } else {
        return Err(invalid("not a PNG or JPEG file (its first bytes are neither signature)"));
    };
    // zune's own size limits stay out of the way: the pixel limit is ours.
    // Strict: zune reports damage it could paper over (a truncated JPEG's
    // scan it still pads, hence `jpeg_is_complete`).
    let options = DecoderOptions::new_safe()
        .set_strict_mode(true)
        .set_max_width(1 << 24)
        .set_max_height(1 << 24)
        .png_set_strip_to_8bit(true)
        .png_set_add_alpha_channel(true)
        .jpeg_set_out_colorspace(ColorSpace::RGBA);
    match format {
        Format::Png => {
            png_preflight(input)?;
            let mut decoder = zune_png::PngDecoder::new_with_options(input.as_slice(), options);
            decoder.decode_headers().map_err(|e| invalid(&format!("not a PNG file it can read: {e:?}")))?;
            let (width, height) = decoder.get_dimensions().ok_or_else(|| invalid("a PNG file without dimensions"))?;
            check_size(width, height, max_pixels, megapixels)?;
            let colorspace = decoder.get_colorspace().ok_or_else(|| invalid("a PNG file without a colour type"))?;
            let size = decoder.output_buffer_size().ok_or_else(|| invalid("a PNG file without dimensions"))?;
            let mut out = Image::alloc(size, OPERATION.name)?;
            decoder.decode_into(&mut out).map_err(|e| invalid(&format!("a damaged PNG file: {e:?}")))?;
            rgba(out, colorspace, width, height)
        }
        Format::Jpeg => {
            if !jpeg_is_complete(input) {
                return Err(invalid("a truncated JPEG file: its last scan has no end (no EOI marker after it)"));
            }
            let scan_bytes = jpeg_scan_bytes(input);
            let mut decoder = zune_jpeg::JpegDecoder::new_with_options(input.as_slice(), options);
            decoder.decode_headers().map_err(|e| invalid(&format!("not a JPEG file it can read: {e:?}")))?;
            let info = decoder.info().ok_or_else(|| invalid("a JPEG file without dimensions"))?;
            let (width, height) = (usize::from(info.width), usize::from(info.height));
            check_size(width, height, max_pixels, megapixels)?;
            // zune-jpeg rounds sides up to whole blocks in 16 bits.
            if width > JPEG_MAX_SIDE || height > JPEG_MAX_SIDE {
                return Err(invalid(&format!(
                    "the JPEG is {width}x{height}: sides over {JPEG_MAX_SIDE} pixels are not supported"
                )));
            }
            // Every 8 x 8 block takes at least one bit of the first scan
            // (its DC code), and an MCU holds at most 4 x 4 blocks of one
            // component (the largest sampling factors): fewer bytes than
            // that cannot hold the image, where zune-jpeg would make up
            // the missing pixels as zeros (as a truncated PNG is refused).
            let mcus = width.div_ceil(32) as u64 * height.div_ceil(32) as u64;
            if (scan_bytes as u64) < mcus.div_ceil(8) {
                return Err(invalid(&format!(
                    "a truncated JPEG file: {scan_bytes} bytes of scan data cannot hold {width} x {height} pixels"
                )));
            }
            let colorspace = decoder.get_output_colorspace().ok_or_else(|| invalid("a JPEG file without colours"))?;
            let size = decoder.output_buffer_size().ok_or_else(|| invalid("a JPEG file without dimensions"))?;
            let mut out = Image::alloc(size, OPERATION.name)?;
            decoder.decode_into(&mut out).map_err(|e| invalid(&format!("a damaged JPEG file: {e:?}")))?;
            rgba(out, colorspace, width, height)
        }
    }
}

/// Whether the last scan of a JPEG ends: an EOI marker (`FF D9`) follows
/// the last start-of-scan marker (`FF DA`). Scans cannot hold either (an
/// `FF` in entropy-coded data is stuffed as `FF 00`), so a file cut short
/// has none, while zune-jpeg would decode it padded. Markers in an embedded
/// thumbnail come before the image's own scans.
fn jpeg_is_complete(file: &[u8]) -> bool {
    let marker = |m: u8| move |w: &[u8]| w == [0xff, m];
    match file.windows(2).rposition(marker(0xda)) {
        Some(sos) => file[sos..].windows(2).any(marker(0xd9)),
        None => false,
    }
}

/// The bytes of entropy-coded data in a JPEG: what follows each
/// start-of-scan segment up to the next marker other than a restart one
/// (`FF D0`-`FF D7`) or a stuffed `FF 00`.
fn jpeg_scan_bytes(file: &[u8]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while let Some(at) = file[i..].windows(2).position(|w| w == [0xff, 0xda]) {
        let start = i + at + 2;
        // The segment's own length comes first; the scan data follows it.
        let header = match file.get(start..start + 2) {
            Some(len) => usize::from(u16::from_be_bytes([len[0], len[1]])),
            None => break,
        };
        let mut j = (start + header).min(file.len());
        // Up to a marker: `FF` followed by neither a stuffed 00 nor a restart.
        while j + 1 < file.len() && (file[j] != 0xff || matches!(file[j + 1], 0x00 | 0xd0..=0xd7)) {
            j += 1;
        }
        total += j.saturating_sub(start + header);
        i = j.max(start);
    }
    total
}

/// Checks a PNG's chunk layout before zune-png sees it, refusing what it
/// would panic on or guess at: an `IHDR` first with a valid colour type
/// and bit depth, a palette (`PLTE`, 1 to 2^depth entries of 3 bytes)
/// before the image data of an indexed image and none in a grayscale one,
/// a `tRNS` that fits the colour type (and the palette), and image data.
fn png_preflight(file: &[u8]) -> Result<(), Error> {
    let mut at = PNG_SIGNATURE.len();
    let (mut colour, mut depth) = (None, 0u8);
    let (mut palette, mut transparency, mut data) = (None::<usize>, None::<usize>, false);
    while at + 8 <= file.len() {
        let len = u32::from_be_bytes([file[at], file[at + 1], file[at + 2], file[at + 3]]) as usize;
        let kind = &file[at + 4..at + 8];
        let body = file.get(at + 8..(at + 8).saturating_add(len)).unwrap_or(&[]);
        if colour.is_none() && kind != b"IHDR" {
            return Err(invalid("a damaged PNG file: its first chunk is not IHDR"));
        }
        match kind {
            b"IHDR" if colour.is_none() => {
                let (d, c) = (body.get(8).copied(), body.get(9).copied());
                let valid = matches!(
                    (c, d),
                    (Some(0), Some(1 | 2 | 4 | 8 | 16))
                        | (Some(3), Some(1 | 2 | 4 | 8))
                        | (Some(2 | 4 | 6), Some(8 | 16))
                );
                if !valid || body.len() != 13 {
                    return Err(invalid(&format!(
                        "a damaged PNG file: colour type {} with bit depth {} is not one PNG allows",
                        c.map_or("?".into(), |c| format!("{c}")),
                        d.map_or("?".into(), |d| format!("{d}"))
                    )));
                }
                (colour, depth) = (c, d.unwrap_or(8));
            }
            b"PLTE" if !data => {
                let entries = body.len() / 3;
                if body.len() % 3 != 0 || entries == 0 || entries > 256 || matches!(colour, Some(0 | 4)) {
                    return Err(invalid("a damaged PNG file: its palette (PLTE) is not 1 to 256 colours of 3 bytes, or its image is grayscale"));
                }
                if colour == Some(3) && entries > 1 << depth {
                    return Err(invalid(&format!(
                        "a damaged PNG file: a palette of {entries} colours for {depth}-bit indices"
                    )));
                }
                palette = Some(entries);
            }
            b"tRNS" if !data => transparency = Some(body.len()),
            b"IDAT" => {
                if colour == Some(3) && palette.is_none() {
                    return Err(invalid(
                        "a damaged PNG file: an indexed-colour image without a palette (no PLTE chunk before its data)",
                    ));
                }
                data = true;
            }
            b"IEND" => break,
            _ => {}
        }
        at = at.saturating_add(12).saturating_add(len);
    }
    if !data {
        return Err(invalid("a truncated PNG file: it has no image data (IDAT)"));
    }
    let fits = match (colour, transparency) {
        (_, None) => true,
        (Some(0), Some(n)) => n == 2,
        (Some(2), Some(n)) => n == 6,
        (Some(3), Some(n)) => palette.is_some_and(|p| n <= p),
        _ => false,
    };
    if !fits {
        return Err(invalid("a damaged PNG file: its transparency (tRNS) does not fit its colour type or palette"));
    }
    Ok(())
}

fn invalid(reason: &str) -> Error {
    Error::invalid_input(OPERATION.name, reason.into())
}

/// Refuses an empty image or one over `max_pixels`, before decoding.
fn check_size(width: usize, height: usize, max_pixels: u64, megapixels: &str) -> Result<(), Error> {
    let pixels = width as u64 * height as u64;
    if pixels == 0 {
        return Err(invalid(&format!("the image is {width}x{height}: it has no pixels")));
    }
    if pixels > max_pixels {
        return Err(invalid(&format!(
            "the image is {width}x{height} ({pixels} pixels), over the limit of {megapixels} megapixels \
             ({max_pixels} pixels; config max_megapixels allows 1, 16, 64 or 256)"
        )));
    }
    Ok(())
}

/// The decoder's samples (8 bits each, in `colorspace`) as RGBA8.
fn rgba(samples: Vec<u8>, colorspace: ColorSpace, width: usize, height: usize) -> Result<Image, Error> {
    let pixels = width * height;
    let channels = colorspace.num_components();
    if samples.len() < pixels * channels {
        return Err(invalid("the decoder gave fewer samples than the image has pixels"));
    }
    let pixels = match colorspace {
        ColorSpace::RGBA => {
            let mut samples = samples;
            samples.truncate(pixels * 4);
            samples
        }
        ColorSpace::RGB | ColorSpace::Luma | ColorSpace::LumaA => {
            let mut out = Image::alloc(pixels * 4, OPERATION.name)?;
            for (px, rgba) in samples.chunks_exact(channels).zip(out.chunks_exact_mut(4)) {
                let (rgb, alpha) = match (colorspace, px) {
                    (ColorSpace::RGB, [r, g, b]) => ([*r, *g, *b], 255),
                    (ColorSpace::Luma, [l]) => ([*l; 3], 255),
                    (ColorSpace::LumaA, [l, a]) => ([*l; 3], *a),
                    _ => unreachable!("chunks of the colour space's size"),
                };
                rgba[..3].copy_from_slice(&rgb);
                rgba[3] = alpha;
            }
            out
        }
        other => return Err(invalid(&format!("images in the {other:?} colour space are not supported"))),
    };
    let image = Image { width: width as u32, height: height as u32, pixels };
    debug_assert_eq!(image.pixels.len(), width * height * 4);
    Ok(image)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    const PHOTO_PNG: &[u8] = include_bytes!("../../../workflows/samples/images/photo.png");
    const PHOTO_JPG: &[u8] = include_bytes!("../../../workflows/samples/images/photo.jpg");

    fn decode(file: &[u8]) -> Result<Image, alloc::string::String> {
        execute_sync(&file.to_vec(), &Config::new()).map_err(|e| alloc::string::ToString::to_string(&e))
    }

    /// The PNG's chunks with its header's colour type set to `colour` and
    /// the chunks `drop` names removed (CRCs made right).
    fn png_with(colour: u8, drop: &[&[u8]]) -> Vec<u8> {
        let mut out = PNG_SIGNATURE.to_vec();
        let mut at = 8;
        while at + 12 <= PHOTO_PNG.len() {
            let len = u32::from_be_bytes(PHOTO_PNG[at..at + 4].try_into().unwrap()) as usize;
            let kind = &PHOTO_PNG[at + 4..at + 8];
            let mut body = PHOTO_PNG[at + 8..at + 8 + len].to_vec();
            if kind == b"IHDR" {
                body[8] = 8;
                body[9] = colour;
            }
            if !drop.contains(&kind) {
                let mut crc = Crc(0xffff_ffff);
                crc.update(kind);
                crc.update(&body);
                out.extend_from_slice(&(body.len() as u32).to_be_bytes());
                out.extend_from_slice(kind);
                out.extend_from_slice(&body);
                out.extend_from_slice(&(!crc.0).to_be_bytes());
            }
            at += 12 + len;
        }
        out
    }

    /// CRC-32 as PNG computes it.
    struct Crc(u32);

    impl Crc {
        fn update(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 ^= u32::from(b);
                for _ in 0..8 {
                    self.0 = if self.0 & 1 == 1 { (self.0 >> 1) ^ 0xedb8_8320 } else { self.0 >> 1 };
                }
            }
        }
    }

    #[test]
    fn an_indexed_png_without_a_palette_is_an_error_not_a_panic() {
        // Trapped in Wasm and panicked natively before the chunks were checked.
        let e = decode(&png_with(3, &[b"PLTE"])).unwrap_err();
        assert!(e.contains("an indexed-colour image without a palette (no PLTE chunk before its data)"), "{e}");
        let e = decode(&png_with(0, &[b"IDAT"])).unwrap_err();
        assert!(e.contains("no image data (IDAT)"), "{e}");
    }

    #[test]
    fn a_jpeg_whose_scan_cannot_hold_its_size_is_truncated_like_a_png() {
        let mut claims_more = PHOTO_JPG.to_vec();
        let sof = claims_more.windows(2).position(|m| m == [0xff, 0xc0]).unwrap();
        claims_more[sof + 5..sof + 9].copy_from_slice(&[0x1f, 0x40, 0x1f, 0x40]); // 8000 x 8000
        let e = decode(&claims_more).unwrap_err();
        assert!(e.contains("a truncated JPEG file: ") && e.contains("cannot hold 8000 x 8000 pixels"), "{e}");
        assert!(decode(PHOTO_JPG).is_ok(), "the sample itself decodes");
    }
}
