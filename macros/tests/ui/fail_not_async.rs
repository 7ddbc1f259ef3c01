#![allow(unused)]
use braid_support::{Bytes, Config, Error, Multihash};

#[braid_macros::operation(description = "d")]
pub fn execute(input: &Bytes, config: &Config) -> Result<Multihash, Error> { todo!() }

fn main() {}
