#![allow(unused)]
use braid_support::{Bytes, Config, Error, Incremental};

pub struct Joined;

impl Incremental for Joined {
    type Output = Bytes;
    fn start(_: &Config) -> Result<Self, Error> { Ok(Joined) }
    fn update(&mut self, _: &[u8]) {}
    fn finish(self) -> Result<Bytes, Error> { Ok(Bytes::new()) }
}

#[braid_macros::operation(description = "d", stream = Joined)]
pub async fn execute(a: &Bytes, b: &Bytes, config: &Config) -> Result<Bytes, Error> { todo!() }

fn main() {}
