//! The JS side of a generated workflow's `next`, `suspend` and `resume`
//! (feature `wasm`): the step object `{ done, output, segmentTime,
//! totalTime }`, a suspended state as a `Uint8Array`, and the state given
//! to `Workflow.resume`, read like any other hostile argument; and the
//! streaming entry: chunks read into a stream, and `runStream`.

use wasm_bindgen::JsValue;

use super::{Memos, State, Step};
use crate::wasm::{FromJs, IntoJs, Place};
use crate::{Bytes, Error};

/// `{ done, output, segmentTime, totalTime }`, times in milliseconds
/// (`undefined` without a clock, `output` `undefined` until done): made in
/// JS by one call (`braidStep` of `wasm.js`), an object literal of one shape.
pub fn step<O: IntoJs>(step: Step<O>) -> Result<JsValue, Error> {
    let ms = |d: core::time::Duration| d.as_secs_f64() * 1e3;
    let output = step.output.map_or(Ok(JsValue::UNDEFINED), IntoJs::into_js)?;
    Ok(crate::wasm::step_object(step.done, output, step.segment_time.map(ms), step.total_time.map(ms)))
}

/// The state as a `Uint8Array`; or the error `Workflow.resume` would give
/// for it (its decoder has limits the encoder has not), so what one gives
/// the other takes. Not inlined into the method that calls it:
/// wasm-bindgen's shim of a method throws when `self` was freed, leaking
/// its stack frame (of wasm-bindgen's stack), which then stays small.
#[inline(never)]
pub fn suspend<M: Memos>(state: &State<M>) -> Result<JsValue, Error> {
    IntoJs::into_js(state.suspend()?)
}

/// The bytes of the state given to `Workflow.resume`, read like any other
/// argument.
pub fn state_bytes(value: &JsValue) -> Result<Bytes, Error> {
    <Bytes as FromJs>::from_js(value, Place::Named("Workflow.resume state"))
}

// `stream.js`, bound in the glue's scope as `braidStreams` by Braid, as
// `wasm.js` is (see `crate::wasm`).
#[wasm_bindgen::prelude::wasm_bindgen(js_namespace = braidStreams)]
extern "C" {
    #[wasm_bindgen(js_name = braidRunStream)]
    fn js_run_stream(source: &JsValue, stream: JsValue) -> js_sys::Promise;
}

/// `runStream(source)`: reads `source` (a `ReadableStream`, a `Blob`, an
/// async iterable such as a Node `Readable`) into `stream`, a generated
/// workflow's JS `Stream`, one chunk in flight at a time, in JS
/// (`stream.js`): no Rust frame waits across an `await`, so the stream is
/// borrowed only for each `update`. Resolves to its output, or rejects with
/// the first error, the source cancelled and the stream freed.
pub fn run_stream(source: &JsValue, stream: JsValue) -> js_sys::Promise {
    js_run_stream(source, stream)
}

/// Feeds the bytes of the JS chunk `chunk` (named `place` in errors) to a
/// stream, `None` once it has been finished ([`Error::Finished`]). A chunk
/// that is not a `Uint8Array` is an error, and the stream is as it was.
pub fn update<S>(
    stream: &mut Option<S>,
    workflow: &str,
    place: &str,
    chunk: &JsValue,
    mut feed: impl FnMut(&mut S, &[u8]),
) -> Result<(), Error> {
    let stream = stream.as_mut().ok_or_else(|| Error::Finished { workflow: workflow.into() })?;
    crate::wasm::read_chunk(chunk, Place::Named(place), |piece| feed(stream, piece))
}

/// Takes a stream to finish it, once ([`Error::Finished`] after that).
pub fn take<S>(stream: &mut Option<S>, workflow: &str) -> Result<S, Error> {
    stream.take().ok_or_else(|| Error::Finished { workflow: workflow.into() })
}
