#![allow(unused)]
use braid_support::{Bytes, Config, Error};

/// A flow-control operation declares one input type (the schema's rule).
#[braid_macros::operation(description = "d")]
pub async fn execute<T: Clone>(salt: &Bytes, inputs: &[&T], config: &Config) -> Result<Vec<T>, Error> { todo!() }

fn main() {}
