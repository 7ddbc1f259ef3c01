//! The component-model boundary of generated workflows (`braid build
//! --targets component`): wit-bindgen, re-exported for the bindings a
//! workflow generates from its WIT world, and [`Lift`] and [`Lower`], the
//! conversions between the values operations take and give and the types
//! those bindings have, with the checks the JS boundary makes (a number
//! that must be an integer in range, a CID's form, a multihash's encoding).
//!
//! [`Packed`] is the encoding of `run-packed`, the entry a host calls
//! instead of `run` to pass every input and the output as one `list<u8>`
//! (copied as one block, where a host's generic values take one per byte).
//!
//! How Braid's types meet WIT: `Bytes` and `Multihash` are `list<u8>`,
//! `String` and `Cid` are `string`, `U64` is `u64`, `Bool` is `bool`,
//! `Vec<T>` a `list`; fields of value types that JS sees as a `number`
//! (`u16`, `u32`, `i32`, `f32`, `f64`) are `f64`, as in JS, optional ones
//! `option`, maps `list<tuple<string, T>>`; a record is a WIT `record`, a
//! choice an `enum`.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

pub use wit_bindgen;

use crate::{Cid, Error, Multihash};

/// A Rust value from the WIT value `T` a caller gave; `place` names it in
/// errors (`input text`, `field width`).
pub trait Lift<T>: Sized {
    /// The value, or an error saying what `place` had to be.
    fn lift(value: T, place: &str) -> Result<Self, Error>;

    /// Each of `values`; a type whose WIT form is itself moves the list.
    fn lift_list(values: Vec<T>, place: &str) -> Result<Vec<Self>, Error> {
        values.into_iter().map(|v| Self::lift(v, place)).collect()
    }
}

/// The WIT value `T` of a Rust value, for a caller.
pub trait Lower<T> {
    /// The value.
    fn lower(self) -> T;

    /// Each of `values`; a type whose WIT form is itself moves the list.
    fn lower_list(values: Vec<Self>) -> Vec<T>
    where
        Self: Sized,
    {
        values.into_iter().map(Self::lower).collect()
    }
}

/// Types that are their own WIT form.
macro_rules! same {
    ($($t:ty),*) => {$(
        impl Lift<$t> for $t {
            fn lift(value: $t, _place: &str) -> Result<Self, Error> {
                Ok(value)
            }
            fn lift_list(values: Vec<$t>, _place: &str) -> Result<Vec<Self>, Error> {
                Ok(values)
            }
        }

        impl Lower<$t> for $t {
            fn lower(self) -> $t {
                self
            }
            fn lower_list(values: Vec<Self>) -> Vec<$t> {
                values
            }
        }
    )*};
}

same!(u8, u64, bool, f64, String);

impl Lift<String> for Cid {
    fn lift(value: String, place: &str) -> Result<Self, Error> {
        Cid::from_text(value).map_err(|e| refused(place, e))
    }
}

impl Lower<String> for Cid {
    fn lower(self) -> String {
        self.into_string()
    }
}

impl Lift<Vec<u8>> for Multihash {
    fn lift(value: Vec<u8>, place: &str) -> Result<Self, Error> {
        Multihash::from_bytes(&value).map_err(|e| refused(place, e))
    }
}

impl Lower<Vec<u8>> for Multihash {
    fn lower(self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}

/// Integers JS (and so WIT, here) sees as a `number`: an `f64` that must be
/// a whole number in range.
macro_rules! integer {
    ($($t:ty => $range:literal),*) => {$(
        impl Lift<f64> for $t {
            fn lift(value: f64, place: &str) -> Result<Self, Error> {
                let int = value as $t;
                if int as f64 != value {
                    return Err(Error::invalid_input(place, format!("{value} is not an integer in {}", $range)));
                }
                Ok(int)
            }
        }

        impl Lower<f64> for $t {
            fn lower(self) -> f64 {
                self.into()
            }
        }
    )*};
}

integer!(u16 => "0..=65535", u32 => "0..=4294967295", i32 => "-2147483648..=2147483647");

impl Lift<f64> for f32 {
    fn lift(value: f64, place: &str) -> Result<Self, Error> {
        let single = value as f32;
        if single.is_infinite() && value.is_finite() {
            return Err(Error::invalid_input(place, format!("{value} is outside f32's range")));
        }
        Ok(single)
    }
}

impl Lower<f64> for f32 {
    fn lower(self) -> f64 {
        self.into()
    }
}

impl<A: Lift<B>, B> Lift<Vec<B>> for Vec<A> {
    fn lift(value: Vec<B>, place: &str) -> Result<Self, Error> {
        A::lift_list(value, place)
    }
}

impl<A: Lower<B>, B> Lower<Vec<B>> for Vec<A> {
    fn lower(self) -> Vec<B> {
        A::lower_list(self)
    }
}

impl<A: Lift<B>, B> Lift<Option<B>> for Option<A> {
    fn lift(value: Option<B>, place: &str) -> Result<Self, Error> {
        value.map(|v| A::lift(v, place)).transpose()
    }
}

impl<A: Lower<B>, B> Lower<Option<B>> for Option<A> {
    fn lower(self) -> Option<B> {
        self.map(A::lower)
    }
}

/// A map is a list of (key, value) pairs; a key given twice is refused.
impl<A: Lift<B>, B> Lift<Vec<(String, B)>> for BTreeMap<String, A> {
    fn lift(value: Vec<(String, B)>, place: &str) -> Result<Self, Error> {
        let mut map = BTreeMap::new();
        for (key, v) in value {
            let v = A::lift(v, place)?;
            if map.contains_key(&key) {
                return Err(Error::invalid_input(
                    place,
                    crate::text::text!("key `", crate::error::truncate(&key, 64), "` is given twice"),
                ));
            }
            map.insert(key, v);
        }
        Ok(map)
    }
}

impl<A: Lower<B>, B> Lower<Vec<(String, B)>> for BTreeMap<String, A> {
    fn lower(self) -> Vec<(String, B)> {
        self.into_iter().map(|(k, v)| (k, v.lower())).collect()
    }
}

/// A WIT value in Braid's packed encoding, what `run-packed` takes and
/// gives: the inputs one after the other, the output alone. Little-endian
/// throughout: `bool` and `u8` one byte, `u64` and `f64` eight, a
/// `string` or `list` its length (a `u32`, in bytes for a string, in items
/// for a list) then its bytes or items, an `option` a byte (0 or 1) then
/// the value if 1, a `tuple` or `record` its members in order, an `enum`
/// its case's index (a `u32`). The host that writes it is Braid's own
/// (`braid serve`, `braid run`); the guest still checks every byte it
/// reads, so a malformed input is an error, never a panic.
pub trait Packed: Sized {
    /// Appends the encoding of `self` to `out`.
    fn pack(&self, out: &mut Vec<u8>);

    /// The value at the start of `input`, which is advanced past it.
    fn unpack(input: &mut &[u8]) -> Result<Self, Error>;

    /// Appends `items`' encodings (a `list`'s items, after its length).
    fn pack_list(items: &[Self], out: &mut Vec<u8>) {
        items.iter().for_each(|item| item.pack(out));
    }

    /// `count` items from the start of `input`.
    fn unpack_list(input: &mut &[u8], count: usize) -> Result<Vec<Self>, Error> {
        // Each item takes at least a byte: a length cannot reserve more
        // than the input holds.
        let mut items = Vec::with_capacity(count.min(input.len()));
        for _ in 0..count {
            items.push(Self::unpack(input)?);
        }
        Ok(items)
    }
}

/// The next `n` bytes of `input`.
fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8], Error> {
    if input.len() < n {
        return Err(malformed("it ends too early"));
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

fn malformed(why: &str) -> Error {
    Error::invalid_input("run-packed", crate::text::text!("the packed input is malformed: ", why))
}

/// A length or an enum's index.
pub fn unpack_u32(input: &mut &[u8]) -> Result<u32, Error> {
    let bytes = take(input, 4)?;
    Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Appends a length or an enum's index; a guest's lengths fit a `u32`.
pub fn pack_u32(n: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// The error for an enum's index that is not one of its cases.
pub fn bad_case() -> Error {
    malformed("an enum's case is out of range")
}

/// Checks that nothing follows the last input.
pub fn unpacked_all(input: &[u8]) -> Result<(), Error> {
    if input.is_empty() {
        Ok(())
    } else {
        Err(malformed("bytes follow the last input"))
    }
}

impl Packed for u8 {
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
    fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
        Ok(take(input, 1)?[0])
    }
    fn pack_list(items: &[Self], out: &mut Vec<u8>) {
        out.extend_from_slice(items);
    }
    fn unpack_list(input: &mut &[u8], count: usize) -> Result<Vec<Self>, Error> {
        Ok(take(input, count)?.to_vec())
    }
}

impl Packed for bool {
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
        match take(input, 1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(malformed("a bool is neither 0 nor 1")),
        }
    }
}

macro_rules! packed_le {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            fn pack(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
                let mut bytes = [0; 8];
                bytes.copy_from_slice(take(input, 8)?);
                Ok(<$t>::from_le_bytes(bytes))
            }
        }
    )*};
}

packed_le!(u64, f64);

impl Packed for String {
    fn pack(&self, out: &mut Vec<u8>) {
        pack_u32(self.len(), out);
        out.extend_from_slice(self.as_bytes());
    }
    fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
        let len = unpack_u32(input)? as usize;
        let bytes = take(input, len)?;
        core::str::from_utf8(bytes).map(String::from).map_err(|_| malformed("a string is not UTF-8"))
    }
}

impl<T: Packed> Packed for Vec<T> {
    fn pack(&self, out: &mut Vec<u8>) {
        pack_u32(self.len(), out);
        T::pack_list(self, out);
    }
    fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
        let count = unpack_u32(input)? as usize;
        T::unpack_list(input, count)
    }
}

impl<T: Packed> Packed for Option<T> {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(value) => {
                out.push(1);
                value.pack(out);
            }
        }
    }
    fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
        match take(input, 1)?[0] {
            0 => Ok(None),
            1 => T::unpack(input).map(Some),
            _ => Err(malformed("an option's tag is neither 0 nor 1")),
        }
    }
}

impl<A: Packed, B: Packed> Packed for (A, B) {
    fn pack(&self, out: &mut Vec<u8>) {
        self.0.pack(out);
        self.1.pack(out);
    }
    fn unpack(input: &mut &[u8]) -> Result<Self, Error> {
        Ok((A::unpack(input)?, B::unpack(input)?))
    }
}

/// A check's error about the value at `place`, naming it.
fn refused(place: &str, error: Error) -> Error {
    match error {
        Error::InvalidInput { reason, .. } => Error::invalid_input(place, reason),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec;

    use super::*;

    type Inputs = (Vec<u8>, (String, (Option<u64>, (Vec<(String, f64)>, bool))));

    fn example() -> Inputs {
        (vec![0, 1, 255], ("é\"".to_string(), (Some(u64::MAX), (vec![("k".to_string(), 0.5)], true))))
    }

    #[test]
    fn packed_values_read_back_whole() {
        let mut bytes = Vec::new();
        example().pack(&mut bytes);
        // The host's layout: a length, then the bytes.
        assert_eq!(bytes[..7], [3, 0, 0, 0, 0, 1, 255]);
        let mut input = bytes.as_slice();
        assert_eq!(Inputs::unpack(&mut input).unwrap(), example());
        assert!(unpacked_all(input).is_ok());
        assert!(unpacked_all(&[0]).is_err());
    }

    /// Malformed inputs are errors, never panics or huge allocations.
    #[test]
    fn malformed_inputs_are_errors() {
        let mut bytes = Vec::new();
        example().pack(&mut bytes);
        for cut in 0..bytes.len() {
            let error = Inputs::unpack(&mut &bytes[..cut]).unwrap_err();
            assert!(error.to_string().contains("the packed input is malformed"), "{error}");
        }
        assert!(<Vec<u64>>::unpack(&mut &u32::MAX.to_le_bytes()[..]).is_err());
        assert!(bool::unpack(&mut &[2][..]).is_err());
        assert!(<Option<u8>>::unpack(&mut &[2, 0][..]).is_err());
        assert!(String::unpack(&mut &[1, 0, 0, 0, 0xff][..]).is_err());
    }
}
