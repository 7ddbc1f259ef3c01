//! `op_utf8`: `String -> Bytes`, the UTF-8 encoding of a text (for
//! workflows that hash or concatenate text).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Bytes, Config, Error};

/// Returns the UTF-8 bytes of `input`.
#[braid_macros::operation(groups = ["SYS"])]
pub async fn execute(input: &str, config: &Config) -> Result<Bytes, Error> {
    let _ = config;
    Ok(input.as_bytes().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_utf8() {
        let out = execute_sync("hé€", &Config::new()).unwrap();
        assert_eq!(out, [0x68, 0xc3, 0xa9, 0xe2, 0x82, 0xac]);
        assert!(execute_sync("", &Config::new()).unwrap().is_empty());
    }
}
