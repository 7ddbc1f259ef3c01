//! Moving values across the wasm-bindgen boundary without serde on the byte
//! path: a `Uint8Array` input is copied into Wasm memory once
//! (`Uint8Array::to_vec`), outputs become `Uint8Array`, `string`, `bigint`,
//! `boolean` or `Array`. Wrong types become [`Error::Type`] naming where the
//! value was and what was expected, so JS callers get an `Error`, never a trap.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::{JsCast, JsError, JsValue};

use crate::{Cid, Config, ConfigKey, Error, Multihash};

pub use js_sys;
pub use wasm_bindgen;
pub use wasm_bindgen_futures;

/// Where a value sits, for error messages: `op_cid input 0`, `inputs[2]`.
#[derive(Clone, Copy)]
pub enum Place<'a> {
    /// A named value.
    Named(&'a str),
    /// An element of a list.
    Item(&'a Place<'a>, usize),
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Named(name) => f.write_str(name),
            Place::Item(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// A value that can be read from JS.
pub trait FromJs: Sized {
    /// The TypeScript type accepted, for messages.
    const EXPECTED: &'static str;
    /// Reads `value`, or says what was wrong with it.
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error>;
}

/// A value that can be handed to JS.
pub trait IntoJs {
    /// Converts `self` into a JS value.
    fn into_js(self) -> JsValue;
}

fn mismatch(place: Place<'_>, expected: &str, value: &JsValue) -> Error {
    Error::type_mismatch(&place.to_string(), expected, describe(value))
}

/// Describes a JS value's type for an error message (`null`, `a string`, ...).
pub fn describe(value: &JsValue) -> String {
    if value.is_null() {
        "null".into()
    } else if value.is_undefined() {
        "undefined".into()
    } else if value.is_string() {
        "a string".into()
    } else if value.as_f64().is_some() {
        "a number".into()
    } else if value.is_bigint() {
        "a bigint".into()
    } else if value.as_bool().is_some() {
        "a boolean".into()
    } else if Array::is_array(value) {
        "an Array".into()
    } else if value.is_instance_of::<Uint8Array>() {
        "a Uint8Array".into()
    } else if value.is_function() {
        "a function".into()
    } else if value.is_object() {
        let object: &Object = value.unchecked_ref();
        let name: String = object.constructor().name().into();
        if name.is_empty() || name == "Object" {
            "an object".into()
        } else {
            format!("an object of class {name}")
        }
    } else {
        format!("a {}", value.js_typeof().as_string().unwrap_or_default())
    }
}

impl FromJs for Vec<u8> {
    const EXPECTED: &'static str = "Uint8Array";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        match value.dyn_ref::<Uint8Array>() {
            Some(array) => Ok(array.to_vec()),
            None => Err(mismatch(place, Self::EXPECTED, value)),
        }
    }
}

impl FromJs for Multihash {
    const EXPECTED: &'static str = "Uint8Array (an encoded multihash)";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        let bytes = Vec::<u8>::from_js(value, place).map_err(|_| mismatch(place, Self::EXPECTED, value))?;
        Multihash::from_bytes(&bytes)
    }
}

impl FromJs for String {
    const EXPECTED: &'static str = "string";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        value.as_string().ok_or_else(|| mismatch(place, Self::EXPECTED, value))
    }
}

impl FromJs for Cid {
    const EXPECTED: &'static str = "string (a CID)";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        let text = value.as_string().ok_or_else(|| mismatch(place, Self::EXPECTED, value))?;
        Cid::from_text(text)
    }
}

impl FromJs for u64 {
    const EXPECTED: &'static str = "bigint in 0..2^64";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        if !value.is_bigint() {
            return Err(mismatch(place, Self::EXPECTED, value));
        }
        u64::try_from(value.clone())
            .map_err(|_| Error::type_mismatch(&place.to_string(), Self::EXPECTED, "a bigint out of range".into()))
    }
}

impl FromJs for bool {
    const EXPECTED: &'static str = "boolean";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        value.as_bool().ok_or_else(|| mismatch(place, Self::EXPECTED, value))
    }
}

impl<T: FromJs> FromJs for Vec<T> {
    const EXPECTED: &'static str = "Array";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        if !Array::is_array(value) {
            return Err(mismatch(place, Self::EXPECTED, value));
        }
        let array: &Array = value.unchecked_ref();
        let mut out = Vec::with_capacity(array.length() as usize);
        for i in 0..array.length() {
            out.push(T::from_js(&array.get(i), Place::Item(&place, i as usize))?);
        }
        Ok(out)
    }
}

impl IntoJs for Vec<u8> {
    fn into_js(self) -> JsValue {
        Uint8Array::from(self.as_slice()).into()
    }
}

impl IntoJs for Multihash {
    fn into_js(self) -> JsValue {
        Uint8Array::from(self.as_bytes()).into()
    }
}

impl IntoJs for String {
    fn into_js(self) -> JsValue {
        JsValue::from_str(&self)
    }
}

impl IntoJs for Cid {
    fn into_js(self) -> JsValue {
        JsValue::from_str(self.as_str())
    }
}

impl IntoJs for u64 {
    fn into_js(self) -> JsValue {
        JsValue::from(self)
    }
}

impl IntoJs for bool {
    fn into_js(self) -> JsValue {
        JsValue::from_bool(self)
    }
}

impl<T: IntoJs> IntoJs for Vec<T> {
    fn into_js(self) -> JsValue {
        let array = Array::new_with_length(self.len() as u32);
        for (i, item) in self.into_iter().enumerate() {
            array.set(i as u32, item.into_js());
        }
        array.into()
    }
}

/// Any JS value, passed through untouched: stands for the type parameter
/// of a generic (flow-control) operation in its standalone Wasm interface.
#[derive(Clone, Debug)]
pub struct AnyValue(pub JsValue);

impl FromJs for AnyValue {
    const EXPECTED: &'static str = "any value";
    fn from_js(value: &JsValue, _place: Place<'_>) -> Result<Self, Error> {
        Ok(AnyValue(value.clone()))
    }
}

impl IntoJs for AnyValue {
    fn into_js(self) -> JsValue {
        self.0
    }
}

/// Reads an operation's config from a JS object (`undefined` or `null`
/// means all defaults); keys and values are checked like anywhere else.
pub fn config_from_js(operation: &str, keys: &[ConfigKey], value: &JsValue) -> Result<Config, Error> {
    if value.is_undefined() || value.is_null() {
        return Config::resolve(operation, keys, []);
    }
    if !value.is_object() || Array::is_array(value) || value.is_function() {
        return Err(Error::type_mismatch(
            &format!("{operation} config"),
            "an object such as { key: \"value\" }",
            describe(value),
        ));
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for entry in Object::entries(value.unchecked_ref()).iter() {
        let entry: Array = entry.unchecked_into();
        let key = entry.get(0).as_string().unwrap_or_default();
        let raw = entry.get(1);
        let Some(text) = raw.as_string() else {
            return Err(Error::type_mismatch(&format!("{operation} config `{key}`"), "string", describe(&raw)));
        };
        pairs.push((key, text));
    }
    Config::resolve(operation, keys, pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Checks the number of positional inputs a JS caller passed.
pub fn check_arity(operation: &str, expected: usize, found: usize) -> Result<(), Error> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::Arity { operation: operation.into(), expected: expected.to_string(), found })
    }
}

/// Turns a Braid error into a JS `Error` with the same message.
pub fn to_js_error(error: Error) -> JsError {
    JsError::new(&error.to_string())
}

/// A settled `Promise`: resolved with the value, or rejected with a JS
/// `Error` carrying the message. For APIs that are asynchronous in JS but
/// finish synchronously in Wasm (no microtask hop inside the module).
pub fn settle(result: Result<JsValue, Error>) -> js_sys::Promise {
    match result {
        Ok(value) => js_sys::Promise::resolve(&value),
        Err(error) => js_sys::Promise::reject(&JsValue::from(to_js_error(error))),
    }
}

/// Reads a JS array of exactly `expected` items, for positional inputs.
/// Borrows `value` (a clone would cost a call into JS on every `run`).
pub fn positional<'a>(value: &'a JsValue, expected: usize, what: &str) -> Result<&'a Array, Error> {
    if !Array::is_array(value) {
        return Err(Error::type_mismatch(what, "an Array of inputs", describe(value)));
    }
    let array: &Array = value.unchecked_ref();
    let found = array.length() as usize;
    if found != expected {
        return Err(Error::Arity { operation: what.into(), expected: expected.to_string(), found });
    }
    Ok(array)
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Milliseconds from `performance.now()` (Node and browsers).
pub fn now_ms() -> f64 {
    performance_now()
}
