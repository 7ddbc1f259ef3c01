#![allow(unused)]
use braid_support::{Bytes, Config, Error, Multihash};

// A key over 64 characters: refused on the key, not lost.
#[braid_macros::operation(description = "d", config(kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk = ["a"]))]
pub async fn execute(input: &Bytes, config: &Config) -> Result<Multihash, Error> { todo!() }

fn main() {}
