//! Error messages put together without `core::fmt`: [`text!`] appends
//! strings and integers to a `String`. Every `format!` costs its call
//! site's argument tables and links `format`'s allocation path and the
//! padding of strings and integers; built this way, braid-support's
//! messages took about 2 KB less of the CID workflow's Wasm module.
//! Messages that show a float still use `format!`, the only correct way to
//! print a float briefly.

use alloc::string::String;

/// A piece of a message.
pub(crate) trait Piece {
    /// Appends `self` to `out`.
    fn push_onto(&self, out: &mut String);
}

impl Piece for str {
    fn push_onto(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for String {
    fn push_onto(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl<T: Piece + ?Sized> Piece for &T {
    fn push_onto(&self, out: &mut String) {
        (**self).push_onto(out);
    }
}

macro_rules! decimal {
    ($($t:ty),*) => {$(
        impl Piece for $t {
            fn push_onto(&self, out: &mut String) {
                push_radix(out, *self as u64, 10);
            }
        }
    )*};
}
decimal!(u8, u32, u64, usize);

/// An integer in lower-case hexadecimal, without a prefix.
pub(crate) struct Hex(pub u64);

impl Piece for Hex {
    fn push_onto(&self, out: &mut String) {
        push_radix(out, self.0, 16);
    }
}

/// Appends `n` in base `radix` (10 or 16), most significant digit first.
#[inline(never)]
fn push_radix(out: &mut String, mut n: u64, radix: u64) {
    // 20 digits hold u64::MAX in decimal, 16 in hexadecimal.
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b"0123456789abcdef"[(n % radix) as usize];
        n /= radix;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

/// The pieces given, one after the other, as a new `String`.
macro_rules! text {
    ($($piece:expr),+ $(,)?) => {{
        let mut out = ::alloc::string::String::new();
        $( $crate::text::Piece::push_onto(&$piece, &mut out); )+
        out
    }};
}
pub(crate) use text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_as_format_writes_them() {
        for n in [0u64, 1, 9, 10, 255, 4096, 1 << 63, u64::MAX] {
            assert_eq!(text!(n), alloc::format!("{n}"));
            assert_eq!(text!(Hex(n)), alloc::format!("{n:x}"));
        }
    }

    #[test]
    fn pieces_follow_each_other() {
        let owned = String::from("b");
        assert_eq!(text!("a", owned, &owned, 7usize, "c"), "abb7c");
    }
}
