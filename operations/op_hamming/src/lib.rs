//! `op_hamming`: `(String, String) -> op_hamming::Similarity`, how far
//! apart two hashes in hex of one length are: the number of bits that
//! differ, out of how many, and the similarity `1 - distance / bits` in
//! [0, 1] (1: equal). Perceptual hashes (`op_image_phash`) of similar
//! images are close; a threshold on the similarity says "the same photo".
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;

use braid_support::{Config, Error};

/// The distance between two hashes.
#[derive(Clone, Copy, Debug, PartialEq, braid_macros::Value)]
pub struct Similarity {
    /// Bits that differ.
    pub distance: u32,
    /// Bits compared (4 per hex digit).
    pub bits: u32,
    /// `1 - distance / bits`.
    pub similarity: f64,
}

/// Compares hashes `a` and `b`, hex digits of either case.
#[braid_macros::operation(groups = ["IMAGE"])]
pub async fn execute(a: &str, b: &str, config: &Config) -> Result<Similarity, Error> {
    let _ = config;
    let invalid = |reason: String| Error::invalid_input(OPERATION.name, reason);
    if a.len() != b.len() || a.is_empty() {
        return Err(invalid(format!(
            "the hashes must be hex of one length, not {} and {} characters",
            a.chars().count(),
            b.chars().count()
        )));
    }
    let mut distance = 0u32;
    for (i, (x, y)) in a.chars().zip(b.chars()).enumerate() {
        let digit = |c: char, which: &str| {
            c.to_digit(16).ok_or_else(|| invalid(format!("hash {which} has {c:?} at {i}, not a hex digit")))
        };
        distance += (digit(x, "a")? ^ digit(y, "b")?).count_ones();
    }
    let bits = a.len() as u32 * 4;
    Ok(Similarity { distance, bits, similarity: 1.0 - f64::from(distance) / f64::from(bits) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn compare(a: &str, b: &str) -> Result<Similarity, Error> {
        execute_sync(a, b, &Config::new())
    }

    #[test]
    fn counts_differing_bits() {
        assert_eq!(compare("00ff", "00FF").unwrap(), Similarity { distance: 0, bits: 16, similarity: 1.0 });
        assert_eq!(compare("0f", "f0").unwrap(), Similarity { distance: 8, bits: 8, similarity: 0.0 });
        assert_eq!(compare("8000000000000001", "0000000000000000").unwrap().distance, 2);
        assert_eq!(compare("8000000000000001", "0000000000000000").unwrap().similarity, 1.0 - 2.0 / 64.0);
    }

    #[test]
    fn other_lengths_and_non_hex_are_errors() {
        assert!(compare("00", "000").unwrap_err().to_string().contains("2 and 3 characters"));
        assert!(compare("", "").is_err());
        let e = compare("0g", "00").unwrap_err().to_string();
        assert!(e.contains("hash a has 'g' at 1"), "{e}");
    }
}
