//! `op_multihash_digest`: `Multihash -> Bytes`, the digest a multihash
//! wraps, without its hash-function code and length. With `op_multihash`
//! before it and `op_encode` after, it makes "the hex sha2-256 of X".
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Bytes, Config, Error, Multihash};

/// Returns the digest of `input`.
#[braid_macros::operation(groups = ["SYS"])]
pub async fn execute(input: &Multihash, config: &Config) -> Result<Bytes, Error> {
    let _ = config;
    Ok(input.digest().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_without_code_and_length() {
        // sha2-256("abc"), FIPS 180-4.
        let digest: [u8; 32] = [
            0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03,
            0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
        ];
        let mh = Multihash::wrap(0x12, &digest).unwrap();
        assert_eq!(mh.as_bytes()[..2], [0x12, 0x20]);
        assert_eq!(execute_sync(&mh, &Config::new()).unwrap(), digest);
        let empty = Multihash::wrap(0x00, &[]).unwrap();
        assert!(execute_sync(&empty, &Config::new()).unwrap().is_empty());
    }
}
