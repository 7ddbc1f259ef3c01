//! `op_exif`: `Bytes -> op_exif::Exif`, the EXIF tags of a photo's primary
//! image (the thumbnail's are left out), read by kamadak-exif from a JPEG,
//! TIFF, PNG, HEIF or WebP file. kamadak-exif needs `std`, so this
//! operation runs natively and in Wasm, not `no_std`.
//!
//! Each tag is keyed by its EXIF name (`Make`, `DateTimeOriginal`; an
//! unknown one by its number, `0xc4a5`) and its value written as text:
//! ASCII as it is (NULs trimmed; several strings joined by newlines),
//! integers in decimal, rationals as `numerator/denominator`, floats in
//! decimal, several values joined by `, `, undefined bytes in hex (a value
//! of a type EXIF does not define says so). The
//! structural pointers (to the Exif, GPS and interoperability IFDs) are
//! not tags of the photo and are left out. A file without EXIF gives an
//! empty map; an EXIF block with an entry or link out of place gives the
//! tags that could be read (as photo tools do); a file that is not a photo
//! or whose EXIF cannot be read at all, an error.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use braid_support::{Bytes, Config, Error};
use exif::{In, Tag, Value};

/// The EXIF tags of a photo: name -> value text.
#[derive(Clone, Debug, PartialEq, Eq, braid_macros::Value)]
pub struct Exif {
    pub tags: BTreeMap<String, String>,
}

/// Reads the EXIF tags of a photo.
#[braid_macros::operation(groups = ["IMAGE"])]
pub async fn execute(input: &Bytes, config: &Config) -> Result<Exif, Error> {
    let _ = config;
    // Tolerant, as photo tools are: an IFD link or an entry out of place
    // (piexifjs writes a next-IFD link kamadak-exif refuses) loses only
    // what it spoils; the tags read are kept.
    let mut reader = exif::Reader::new();
    reader.continue_on_error(true);
    let read = reader
        .read_from_container(&mut std::io::Cursor::new(input.as_slice()))
        .or_else(|e| e.distill_partial_result(|_errors| {}));
    let exif = match read {
        Ok(exif) => exif,
        Err(exif::Error::NotFound(_)) => return Ok(Exif { tags: BTreeMap::new() }),
        Err(e) => return Err(Error::invalid_input(OPERATION.name, format!("cannot read its EXIF: {e}"))),
    };
    let pointers = [Tag::ExifIFDPointer, Tag::GPSInfoIFDPointer, Tag::InteropIFDPointer];
    let tags = exif
        .fields()
        .filter(|f| f.ifd_num == In::PRIMARY && !pointers.contains(&f.tag))
        .map(|f| (name(f.tag), text(&f.value)))
        .collect();
    Ok(Exif { tags })
}

/// The tag's EXIF name, or its number when kamadak-exif does not know it.
fn name(tag: Tag) -> String {
    match tag.description() {
        Some(_) => tag.to_string(),
        None => format!("0x{:04x}", tag.number()),
    }
}

/// A value as text (see the crate docs).
fn text(value: &Value) -> String {
    fn join<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
        items.iter().map(f).collect::<Vec<_>>().join(", ")
    }
    match value {
        Value::Ascii(strings) => strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).trim_end_matches('\0').to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Byte(v) => join(v, u8::to_string),
        Value::Short(v) => join(v, u16::to_string),
        Value::Long(v) => join(v, u32::to_string),
        Value::SByte(v) => join(v, i8::to_string),
        Value::SShort(v) => join(v, i16::to_string),
        Value::SLong(v) => join(v, i32::to_string),
        Value::Rational(v) => join(v, |r| format!("{}/{}", r.num, r.denom)),
        Value::SRational(v) => join(v, |r| format!("{}/{}", r.num, r.denom)),
        Value::Float(v) => join(v, f32::to_string),
        Value::Double(v) => join(v, f64::to_string),
        Value::Undefined(bytes, _) => hex(bytes),
        // A type EXIF does not define: its bytes were not read.
        Value::Unknown(kind, count, _) => format!("({count} values of unknown type {kind})"),
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}
