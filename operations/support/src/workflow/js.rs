//! The JS side of a generated workflow's `next`, `suspend` and `resume`
//! (feature `wasm`): the step object `{ done, output, segmentTime,
//! totalTime }`, a suspended state as a `Uint8Array`, and the state given
//! to `Workflow.resume`, read like any other hostile argument.

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use super::{Memos, State, Step};
use crate::wasm::{FromJs, IntoJs, Place};
use crate::{Bytes, Error};

/// `{ done, output, segmentTime, totalTime }`, times in milliseconds
/// (`undefined` without a clock, `output` `undefined` until done).
pub fn step<O: IntoJs>(step: Step<O>) -> Result<JsValue, Error> {
    let object = Object::new();
    let ms = |d: core::time::Duration| JsValue::from_f64(d.as_secs_f64() * 1e3);
    let output = step.output.map_or(Ok(JsValue::UNDEFINED), IntoJs::into_js)?;
    // Setting a data property on a fresh plain object runs no caller code
    // and cannot fail.
    let _ = Reflect::set(&object, &"done".into(), &JsValue::from_bool(step.done));
    let _ = Reflect::set(&object, &"output".into(), &output);
    let _ = Reflect::set(&object, &"segmentTime".into(), &step.segment_time.map_or(JsValue::UNDEFINED, ms));
    let _ = Reflect::set(&object, &"totalTime".into(), &step.total_time.map_or(JsValue::UNDEFINED, ms));
    Ok(object.into())
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
