//! `op_collect` (group `FLOWCONTROL`): N >= 1 inputs of one type `T` ->
//! `Vec<T>` in input order. The generator checks at validation time that
//! every input has the same type; here that is rustc's job.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use braid_support::{Config, Error};

/// Collects `inputs` into one list, cloning each value once.
#[braid_macros::operation]
pub async fn execute<T: Clone>(inputs: &[&T], config: &Config) -> Result<Vec<T>, Error> {
    let _ = config;
    if inputs.is_empty() {
        return Err(Error::Arity { operation: OPERATION.name.into(), expected: "at least 1".into(), found: 0 });
    }
    Ok(inputs.iter().map(|v| (*v).clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn collects_in_order() {
        let (a, b, c) = (vec![1u8], vec![2u8, 3], Vec::new());
        let out = execute_sync(&[&a, &b, &c], &config([]).unwrap()).unwrap();
        assert_eq!(out, [a, b, c]);
    }

    #[test]
    fn needs_at_least_one_input() {
        let err = execute_sync::<u64>(&[], &Config::new()).unwrap_err();
        assert_eq!(err.to_string(), "op_collect: expected at least 1 input(s), found 0");
    }

    const _: () = assert!(OPERATION.flow_control);

    #[test]
    fn is_flow_control_and_generic() {
        assert_eq!(OPERATION.inputs, ["T"]);
        assert_eq!(OPERATION.output, "Vec<T>");
        assert!(OPERATION.manifest_json.contains(r#""groups":["FLOWCONTROL"]"#));
    }
}
