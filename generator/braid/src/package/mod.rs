//! Packaging what a build compiled: the package of one JS target
//! ([`js`]: wasm-bindgen, wasm-opt, `package.json`, with Braid's touches to
//! the glue, its trap guard and the fast path of `run` in it), the one npm
//! package of every JS platform ([`npm`]), the
//! `.crate`s of a Cargo registry ([`cargo`]), and a build's distribution,
//! every file the publish service serves of it ([`dist`]).

mod api;
pub mod cargo;
pub mod dist;
mod fast_run;
mod glue;
pub mod js;
pub mod npm;
mod traps;
