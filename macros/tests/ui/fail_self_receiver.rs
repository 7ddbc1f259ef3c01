#![allow(unused)]
use braid_support::{Bytes, Config, Error, Multihash};

pub struct Op;
impl Op {
    #[braid_macros::operation(description = "d")]
    pub async fn execute(&self, config: &Config) -> Result<Multihash, Error> { todo!() }
}

fn main() {}
