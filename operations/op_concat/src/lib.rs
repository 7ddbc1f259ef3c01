//! `op_concat`: `Vec<Bytes> -> Bytes`, the concatenation of a list of byte
//! strings (typically the output of `op_collect`).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Bytes, Config, Error};

/// Concatenates `input` in order.
#[braid_macros::operation(groups = ["SYS"])]
pub async fn execute(input: &[Bytes], config: &Config) -> Result<Bytes, Error> {
    let _ = config;
    Ok(input.concat())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn concatenates_in_order() {
        let out = execute_sync(&[vec![1, 2], vec![], vec![3]], &Config::new()).unwrap();
        assert_eq!(out, [1, 2, 3]);
        assert!(execute_sync(&[], &Config::new()).unwrap().is_empty());
    }
}
