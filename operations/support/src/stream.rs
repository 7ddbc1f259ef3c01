//! The incremental form an operation may offer next to `execute`: started
//! with its config, fed its one `Bytes` input chunk by chunk, finished to
//! the output `execute` gives for the whole input. An operation declares it
//! with `#[operation(stream = T)]` (its manifest then says `"stream":
//! true`, and the macro re-exports `T` as `OperationStream`), so a workflow
//! that starts with it can take its input without holding all of it.

use crate::{Config, Error};

/// An operation's incremental form: `start`, `update` for each chunk,
/// `finish`. For every way of cutting an input into chunks (none, for the
/// empty input), `finish` gives what `execute` gives for the whole.
pub trait Incremental: Sized {
    /// The operation's output.
    type Output;

    /// A new stream with the operation's resolved config (an unsupported
    /// value is the error `execute` would give).
    fn start(config: &Config) -> Result<Self, Error>;

    /// Feeds the next chunk of the input (of any length, empty included).
    fn update(&mut self, chunk: &[u8]);

    /// The output for all the chunks fed.
    fn finish(self) -> Result<Self::Output, Error>;
}
