//! Packaging what a build compiled: the package of one JS target
//! ([`js`]: wasm-bindgen, wasm-opt, `package.json`, with Braid's touches to
//! the glue), the one npm package of every JS platform ([`npm`]), and the
//! `.crate`s of a Cargo registry ([`cargo`]).

pub mod cargo;
mod glue;
pub mod js;
pub mod npm;
