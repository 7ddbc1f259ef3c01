//! `op_share`: `Bytes -> Bytes`, its input as it is. Each `-1` among a
//! workflow's segment inputs is an external input of its own; a segment
//! of `op_share` on one makes it a segment output, memoised once and
//! passed by reference to every segment that lists it (`photo_proof`
//! hashes and decodes one file this way). The copy costs one pass over the
//! bytes.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Bytes, Config, Error};

/// Returns `input` unchanged.
#[braid_macros::operation(groups = ["SYS"])]
pub async fn execute(input: &[u8], config: &Config) -> Result<Bytes, Error> {
    let _ = config;
    let mut out = Bytes::new();
    out.try_reserve_exact(input.len()).map_err(|_| {
        Error::invalid_input(OPERATION.name, alloc::format!("no room in memory for {} bytes", input.len()))
    })?;
    out.extend_from_slice(input);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn returns_its_input() {
        assert_eq!(execute_sync(&[1, 2, 3], &Config::new()).unwrap(), vec![1, 2, 3]);
        assert!(execute_sync(&[], &Config::new()).unwrap().is_empty());
    }
}
