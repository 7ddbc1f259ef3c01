//! Values as JSON text, for programs that print them (`braid run`): what
//! `#[derive(Value)]` types and the fields they may hold write. Records
//! are objects keyed by their JS names (lowerCamelCase), choices strings,
//! bytes and multihashes hex strings, numbers and strings as
//! `JSON.stringify` writes them (a non-finite float `null`).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::{Cid, Multihash};

/// A value that writes itself as JSON.
pub trait Json {
    /// Appends the JSON text of `self` to `out`.
    fn write_json(&self, out: &mut String);
}

/// The JSON text of `value`.
pub fn to_string<T: Json + ?Sized>(value: &T) -> String {
    let mut out = String::new();
    value.write_json(&mut out);
    out
}

/// Appends `s` to `out` as a JSON string (as `JSON.stringify` escapes it).
pub use braid_schema::write_json_string as write_str;

fn write_hex(bytes: &[u8], out: &mut String) {
    out.push('"');
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('"');
}

macro_rules! display {
    ($($t:ty),*) => {$(
        impl Json for $t {
            fn write_json(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
display!(u16, u32, i32, u64, bool);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Json for $t {
            fn write_json(&self, out: &mut String) {
                braid_schema::write_json_float(f64::from(*self), out);
            }
        }
    )*};
}
float!(f32, f64);

impl Json for String {
    fn write_json(&self, out: &mut String) {
        write_str(self, out);
    }
}

impl Json for Cid {
    fn write_json(&self, out: &mut String) {
        write_str(self.as_str(), out);
    }
}

impl Json for Multihash {
    fn write_json(&self, out: &mut String) {
        write_hex(self.as_bytes(), out);
    }
}

/// Bytes: a hex string (`u8` itself is no `Json`, so this impl and the
/// one for lists do not meet).
impl Json for Vec<u8> {
    fn write_json(&self, out: &mut String) {
        write_hex(self, out);
    }
}

impl<T: Json> Json for Vec<T> {
    fn write_json(&self, out: &mut String) {
        out.push('[');
        for (i, v) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v.write_json(out);
        }
        out.push(']');
    }
}

impl<T: Json> Json for Option<T> {
    fn write_json(&self, out: &mut String) {
        match self {
            Some(v) => v.write_json(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: Json> Json for BTreeMap<String, T> {
    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(k, out);
            out.push(':');
            v.write_json(out);
        }
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn writes_each_kind() {
        assert_eq!(to_string(&vec![1u8, 255]), "\"01ff\"");
        assert_eq!(to_string(&vec![String::from("a\"\n")]), "[\"a\\\"\\n\"]");
        assert_eq!(to_string(&(Some(1.5f64), None::<u32>).0), "1.5");
        assert_eq!(to_string(&None::<u32>), "null");
        assert_eq!(to_string(&f64::NAN), "null");
        let map = BTreeMap::from([(String::from("b"), 2u32), (String::from("a"), 1)]);
        assert_eq!(to_string(&map), "{\"a\":1,\"b\":2}");
        assert_eq!(to_string(&vec![vec![1u32], vec![]]), "[[1],[]]");
    }
}
