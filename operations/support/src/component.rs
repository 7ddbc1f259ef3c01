//! The component-model boundary of generated workflows (`braid build
//! --targets component`): wit-bindgen, re-exported for the bindings a
//! workflow generates from its WIT world, and [`Lift`] and [`Lower`], the
//! conversions between the values operations take and give and the types
//! those bindings have, with the checks the JS boundary makes (a number
//! that must be an integer in range, a CID's form, a multihash's encoding).
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

/// A check's error about the value at `place`, naming it.
fn refused(place: &str, error: Error) -> Error {
    match error {
        Error::InvalidInput { reason, .. } => Error::invalid_input(place, reason),
        other => other,
    }
}

/// What went wrong, as a component's caller can tell cases apart: the
/// `error-kind` of a workflow's WIT world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An input (or its number or type) the workflow does not take.
    InvalidInput,
    /// A config key or value of an operation that is not allowed or not
    /// compiled in.
    Config,
    /// Anything else an operation refused.
    Failed,
}

impl ErrorKind {
    /// The kind of `error`.
    pub fn of(error: &Error) -> Self {
        match error {
            Error::InvalidInput { .. } | Error::Type { .. } | Error::Arity { .. } => Self::InvalidInput,
            Error::UnknownConfigKey { .. } | Error::InvalidConfigValue { .. } | Error::NotCompiledIn { .. } => {
                Self::Config
            }
            _ => Self::Failed,
        }
    }
}
