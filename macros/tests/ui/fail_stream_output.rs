#![allow(unused)]
use braid_support::{Bytes, Config, Error, Incremental, Multihash};

/// An incremental form whose output is not the operation's.
pub struct Lengths(usize);

impl Incremental for Lengths {
    type Output = Bytes;
    fn start(_: &Config) -> Result<Self, Error> { Ok(Lengths(0)) }
    fn update(&mut self, chunk: &[u8]) { self.0 += chunk.len(); }
    fn finish(self) -> Result<Bytes, Error> { Ok(Bytes::new()) }
}

#[braid_macros::operation(description = "d", stream = Lengths)]
pub async fn execute(input: &Bytes, config: &Config) -> Result<Multihash, Error> { todo!() }

fn main() {}
