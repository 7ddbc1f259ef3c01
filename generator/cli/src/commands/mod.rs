//! One module per `braid` subcommand: its arguments (clap) and its `run`.

pub mod build;
pub mod cache;
pub mod client;
pub mod completions;
pub mod deploy;
pub mod doctor;
pub mod generate;
pub mod new;
pub mod op_package;
pub mod ops;
pub mod run;
pub mod schema;
pub mod serve;
pub mod validate;
