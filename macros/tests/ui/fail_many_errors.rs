#![allow(unused)]
use braid_support::{Bytes, Config, Error, Multihash};

// Independent mistakes in the attribute, the signature and the manifest
// rules: each is reported, on its own tokens, in one compile.
#[braid_macros::operation(description = "d", colour = "red", groups = ["sys", "FLOWCONTROL"], config(hasher = ["a", "a"], base = [], codec = [1]))]
fn run(input: Bytes, other: &mut Bytes, config: &Config) -> Multihash { todo!() }

fn main() {}
