#![allow(unused)]
use braid_support::{Bytes, Config, Error, Multihash};

#[braid_macros::operation(description = "d")]
pub async fn execute(input: &Bytes, config: &Config) -> Multihash { todo!() }

fn main() {}
