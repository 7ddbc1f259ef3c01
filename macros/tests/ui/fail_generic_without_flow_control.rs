#![allow(unused)]
use braid_support::{Bytes, Config, Error, Multihash};

#[braid_macros::operation(description = "d")]
pub async fn execute<T: Clone>(input: &T, config: &Config) -> Result<T, Error> { todo!() }

fn main() {}
