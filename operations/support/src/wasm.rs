//! Moving values across the wasm-bindgen boundary without serde on the byte
//! path, and without trusting the JS caller: a `Uint8Array` input is copied
//! into Wasm memory once, outputs become `Uint8Array`, `string`, `bigint`,
//! `boolean` or `Array`. Wrong types become [`Error::Type`] naming where the
//! value was and what was expected, so JS callers get an `Error`, never a
//! trap.
//!
//! Hostile values (a detached buffer, a revoked `Proxy`, a getter that
//! throws, a `Uint8Array` subclass lying about its `length`, a claimed
//! length of 2^31) are handled the same way. Every JS access that can run
//! the caller's code or throw is an import with wasm-bindgen's `catch` (the
//! functions of `wasm.js`), or one that catches in JS and leaves the
//! exception for `braidTakeLeft` (the hot reads: a list's length, an item
//! read as bytes), so an exception comes back as an `Err` instead
//! of unwinding through Rust frames, which would leave the instance borrowed
//! and leak wasm-bindgen's stack. Bytes are located with the intrinsic
//! `%TypedArray%` getters, never the value's own (a `Uint8Array` subclass
//! may lie about its `length`; it is read through a fresh view of its real
//! bytes). Lengths are checked
//! against [`MAX_BYTES`] and [`MAX_ITEMS`] before anything is allocated, an
//! `Array` grows as its items are read (never from the length it claims),
//! and the copies wasm-bindgen's glue allocates (with an allocator that
//! traps when it fails) are first reserved and released here with
//! `try_reserve`, so they find the room they need.

use alloc::string::String;
use alloc::vec::Vec;
use alloc::{format, vec};
use core::fmt;

use wasm_bindgen::{JsCast, JsError, JsValue};

use crate::text::{text, Piece};
use crate::{Cid, Config, ConfigKey, Error, Multihash};

pub use js_sys;
pub use wasm_bindgen;
pub use wasm_bindgen_futures;

/// The most bytes read from JS as one `Uint8Array` (512 MiB). Larger ones
/// are an [`Error::Type`], like every limit here.
pub const MAX_BYTES: usize = 512 << 20;

/// The longest string read from JS, in UTF-16 units (its `length`): 2^29,
/// more than V8 allows (2^29 - 24).
pub const MAX_UNITS: usize = 1 << 29;

/// The most items read from JS as one `Array` (1,048,576).
pub const MAX_ITEMS: usize = 1 << 20;

// `wasm.js`'s functions, from the glue's scope: Braid binds the namespace
// `braidSupport` there, made of that file, in every package it makes (no
// wasm-bindgen snippet, so no file of its own to load or convert).
#[wasm_bindgen::prelude::wasm_bindgen(js_namespace = braidSupport)]
extern "C" {
    // Without `catch`: these run no code of the caller's (intrinsic getters
    // only) and do not throw. The bytes `braidByteLength` finds (unless
    // empty) are copied with `braidCopyFound`, or forgotten.
    #[wasm_bindgen(js_name = braidByteLength)]
    fn js_byte_length(value: &JsValue) -> f64;
    #[wasm_bindgen(js_name = braidCopyFound)]
    fn js_copy_found(memory: &JsValue, ptr: u32, start: f64, length: u32, forget: bool) -> bool;
    #[wasm_bindgen(js_name = braidFoundIn)]
    fn js_found_in(memory: &JsValue) -> bool;
    #[wasm_bindgen(js_name = braidForgetBytes)]
    fn js_forget_bytes();
    // Without `catch` too: these catch what the caller's code throws and
    // leave it for `braidTakeLeft`.
    #[wasm_bindgen(js_name = braidListLength)]
    fn js_list_length(value: &JsValue) -> f64;
    #[wasm_bindgen(js_name = braidItemBytes)]
    fn js_item_bytes(list: &JsValue, index: u32) -> f64;
    #[wasm_bindgen(js_name = braidTakeLeft)]
    fn js_take_left() -> JsValue;
    #[wasm_bindgen(catch, js_name = braidItem)]
    fn js_item(list: &JsValue, index: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = braidEntries)]
    fn js_entries(value: &JsValue, max: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = braidIsRecord)]
    fn js_is_record(value: &JsValue) -> bool;
    #[wasm_bindgen(catch, js_name = braidField)]
    fn js_field(record: &JsValue, key: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = braidRecordOut)]
    fn js_record_out() -> JsValue;
    #[wasm_bindgen(js_name = braidSetField)]
    fn js_set_field(record: &JsValue, key: &str, value: JsValue);
    #[wasm_bindgen(js_name = braidStep)]
    fn js_step(done: bool, output: JsValue, segment_time: Option<f64>, total_time: Option<f64>) -> JsValue;
    #[wasm_bindgen(catch, js_name = braidBytesOut)]
    fn js_bytes_out(bytes: &[u8]) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = braidStringOut)]
    fn js_string_out(text: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = braidDescribe)]
    fn js_describe(value: &JsValue) -> Result<String, JsValue>;
    #[wasm_bindgen(catch, js_name = braidThrown)]
    fn js_thrown(prefix: &str, exception: &JsValue) -> Result<String, JsValue>;
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Where a value sits, for error messages: `op_cid input 0`, `inputs[2]`,
/// `input 0.pixels`.
#[derive(Clone, Copy)]
pub enum Place<'a> {
    /// A named value.
    Named(&'a str),
    /// An element of a list.
    Item(&'a Place<'a>, usize),
    /// A field of a record, or a key of a map.
    Field(&'a Place<'a>, &'a str),
}

impl Piece for Place<'_> {
    fn push_onto(&self, out: &mut String) {
        match self {
            Place::Named(name) => out.push_str(name),
            Place::Item(parent, i) => {
                parent.push_onto(out);
                out.push('[');
                i.push_onto(out);
                out.push(']');
            }
            Place::Field(parent, key) => {
                parent.push_onto(out);
                out.push('.');
                out.push_str(key);
            }
        }
    }
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&text!(self))
    }
}

/// A value that can be read from JS.
pub trait FromJs: Sized {
    /// The TypeScript type accepted, for messages.
    const EXPECTED: &'static str;
    /// Reads `value`, or says what was wrong with it.
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error>;

    /// Reads item `index` of the JS list `list` (its getter runs once):
    /// the item, then [`from_js`](Self::from_js). Bytes override it to
    /// read and locate the item in one call into JS.
    fn from_item(list: &JsValue, index: u32, place: Place<'_>) -> Result<Self, Error> {
        let value = js_item(list, index).map_err(|e| threw(place, Self::EXPECTED, &e))?;
        Self::from_js(&value, place)
    }
}

/// A value that can be handed to JS.
pub trait IntoJs {
    /// Converts `self` into a JS value; fails only when JS refuses to hold
    /// it (a string or `Uint8Array` too large for the engine).
    fn into_js(self) -> Result<JsValue, Error>;
}

/// A borrowed output (an operation returning `&'a T`) crosses as its
/// value: JS gets a copy, as of any output.
impl<T: IntoJs + Clone> IntoJs for &T {
    fn into_js(self) -> Result<JsValue, Error> {
        self.clone().into_js()
    }
}

/// An [`Error::Type`] at `place` (every error of this module is one).
#[inline(never)]
fn fail(place: Place<'_>, expected: &str, found: String) -> Error {
    Error::type_mismatch(&text!(place), expected, found)
}

fn mismatch(place: Place<'_>, expected: &str, value: &JsValue) -> Error {
    fail(place, expected, describe(value))
}

/// The error for a value whose reading threw `exception`.
fn threw(place: Place<'_>, expected: &str, exception: &JsValue) -> Error {
    fail(place, expected, thrown("a value that threw while being read: ", exception))
}

/// What is found when a value is over its limit, or over what Wasm memory
/// has room for (its size is not shown: it may not even fit in a `usize`).
const LARGER_BYTES: &str = "a Uint8Array larger than the limit of 536870912 bytes or than Wasm memory has room for";
const LONGER_STRING: &str = "a string longer than the limit of 536870912 UTF-16 units or than Wasm memory has room for";
const DETACHED_WHILE_READ: &str =
    "a Uint8Array whose ArrayBuffer was detached while it was read (a view of this module's own memory, which grew?)";
const OWN_MEMORY: &str = "a Uint8Array over this module's own Wasm memory, which growing detaches (copy it first)";
const MORE_ITEMS: &str = "an Array of more items than Wasm memory has room for";
const _: () = assert!(MAX_BYTES == 536870912 && MAX_UNITS == 536870912, "the messages above show the limits");

/// Describes a JS value's type for an error message (`null`, `a string`,
/// `a revoked Proxy`, ...), without letting the value throw.
pub fn describe(value: &JsValue) -> String {
    js_describe(value).unwrap_or_else(|_| "a value that cannot be described".into())
}

/// `prefix` and an exception as text, for an error message.
fn thrown(prefix: &str, exception: &JsValue) -> String {
    js_thrown(prefix, exception).unwrap_or_else(|_| prefix.into())
}

/// The number of items of a JS Array (or a Proxy of one).
#[inline(never)]
fn list_length(value: &JsValue, place: Place<'_>, expected: &str) -> Result<u32, Error> {
    let length = js_list_length(value);
    if length == -1.0 {
        return Err(mismatch(place, expected, value));
    }
    if length == -2.0 {
        return Err(threw(place, expected, &js_take_left()));
    }
    // A real Array's length is a u32; a Proxy's trap may claim anything.
    let items = length as u32;
    if items as f64 != length {
        return Err(fail(place, expected, "an Array whose length is invalid".into()));
    }
    Ok(items)
}

/// Reads item `index` of a JS list as a `T` (the item's getter may run,
/// once).
pub fn read_item<T: FromJs>(list: &JsValue, index: u32, place: Place<'_>) -> Result<T, Error> {
    T::from_item(list, index, place)
}

/// Reads item `index` of a JS list as bytes, located in the same call.
fn read_bytes_item(list: &JsValue, index: u32, place: Place<'_>, expected: &str) -> Result<Vec<u8>, Error> {
    let length = js_item_bytes(list, index);
    if length == -1.0 {
        return Err(mismatch(place, expected, &js_take_left()));
    }
    if length == -2.0 {
        return Err(threw(place, expected, &js_take_left()));
    }
    take_found_bytes(length, place, expected)
}

/// Whether `length` bytes can be allocated, for wasm-bindgen's glue, whose
/// allocations trap when they fail: reserved and released at once, the room
/// is there for the glue's allocation that follows (nothing else allocates
/// in between).
fn room_for(length: usize) -> bool {
    Vec::<u8>::new().try_reserve_exact(length).is_ok()
}

/// Whether Wasm memory has room for `bytes` more, asked by the glue's fast
/// path of `run` and `runSync` (Braid's `package/glue.rs`) before it copies
/// inputs it has checked into Wasm memory with wasm-bindgen's allocator,
/// which traps when it fails. The glue asks for all of a call's inputs at
/// once, with room for wasm-bindgen to grow a string's copy: see
/// [`room_for`]. A plain export of the module, for the glue alone
/// (wasm-bindgen makes no JS function of it): 1 for yes, 0 for no.
// The one name this crate gives a symbol: unsafe only in that another
// crate's `__braid_room` would clash with it.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn __braid_room(bytes: f64) -> bool {
    // A count of bytes from JS: an integer below 2^53, exact in an f64.
    bytes <= usize::MAX as f64 && room_for(bytes as usize)
}

/// The bytes of an input that the glue's fast path copied into Wasm memory
/// for a typed entry (Braid's `braidPassBytes`, in its
/// `package/glue/fast-run.js`), which hands the entry their address and
/// length as numbers: from here on they are Rust's. This is how
/// wasm-bindgen takes a `Vec<u8>` argument, with the copy into Wasm memory
/// Braid's own, so its glue is called as wasm-bindgen wrote it.
///
/// # Safety
///
/// `ptr` is what this module's `__wbindgen_malloc(len, 1)` returned, its
/// `len` bytes all written, and nothing else owns it: it is handed over
/// once. Only the glue's functions of the typed entries call them, and
/// those are not exported from the JS module. The raw Wasm exports are
/// reachable by whoever holds the instance's exports (a web package's
/// `initSync()` returns them), as those of every wasm-bindgen export
/// taking a `Vec<u8>` or a `String` are, whose `(ptr, len)` wasm-bindgen
/// takes over the same way: a forged pair corrupts that instance's
/// memory, nothing outside it.
#[allow(unsafe_code)]
pub unsafe fn passed_bytes(ptr: u32, len: u32) -> Vec<u8> {
    if len == 0 {
        // `__wbindgen_malloc` allocates nothing for no bytes.
        return Vec::new();
    }
    let len = len as usize;
    // SAFETY: the caller's contract above: an allocation of the global
    // allocator of exactly `len` bytes at alignment 1, initialised, owned
    // by no one else; Wasm addresses are `u32`s.
    unsafe { Vec::from_raw_parts(ptr as usize as *mut u8, len, len) }
}

/// Reads the bytes of a `Uint8Array` (subclasses included) as they are,
/// whatever its own getters say.
fn read_bytes(value: &JsValue, place: Place<'_>, expected: &str) -> Result<Vec<u8>, Error> {
    let length = js_byte_length(value);
    if length < 0.0 {
        return Err(mismatch(place, expected, value));
    }
    take_found_bytes(length, place, expected)
}

/// Copies the `length` bytes `braidByteLength` just found into Wasm memory
/// (or forgets them when they are over the limit or Wasm memory's room).
fn take_found_bytes(length: f64, place: Place<'_>, expected: &str) -> Result<Vec<u8>, Error> {
    if length == 0.0 {
        return Ok(Vec::new());
    }
    if length > MAX_BYTES as f64 || !room_for(length as usize) {
        js_forget_bytes();
        return Err(fail(place, expected, LARGER_BYTES.into()));
    }
    // Nothing has run in JS since `braidByteLength`: the bytes it found.
    let mut bytes = vec![0; length as usize];
    if !copy_found(&mut bytes, 0, true) {
        return Err(fail(place, expected, DETACHED_WHILE_READ.into()));
    }
    Ok(bytes)
}

/// Copies as many bytes as `into` holds of those `braidByteLength` found,
/// from `start`, forgetting them if `forget`: false when they are no longer
/// there (their buffer detached: a view of this module's own memory is when
/// it grows).
///
/// The copy is JS's `set` into a view of exactly `into`, with no call of
/// wasm-bindgen's (which copies as many bytes as a view has when it copies:
/// more than were allocated, for a length-tracking view of a growable
/// `SharedArrayBuffer` that another thread grew meanwhile).
fn copy_found(into: &mut [u8], start: u64, forget: bool) -> bool {
    // Wasm memory is under 4 GiB: pointers and lengths fit in a u32.
    js_copy_found(&wasm_bindgen::memory(), into.as_mut_ptr() as u32, start as f64, into.len() as u32, forget)
}

/// The most bytes of one chunk in Wasm memory at a time (1 MiB): see
/// [`read_chunk`].
pub const PIECE: usize = 1 << 20;

/// Gives the bytes of a `Uint8Array` chunk (subclasses included) to `feed`
/// a [`PIECE`] at a time, each copied into Wasm memory once and dropped
/// before the next: a chunk of any length (no [`MAX_BYTES`] limit) takes at
/// most a piece of Wasm memory. A value that is not a `Uint8Array`, or whose
/// buffer is detached, is an error before `feed` sees anything; so is a
/// first piece Wasm memory has no room for.
pub fn read_chunk(value: &JsValue, place: Place<'_>, mut feed: impl FnMut(&[u8])) -> Result<(), Error> {
    const EXPECTED: &str = "Uint8Array";
    let length = js_byte_length(value);
    if length < 0.0 {
        return Err(mismatch(place, EXPECTED, value));
    }
    // A byte length is an integer below 2^53: exact in an f64.
    let length = length as u64;
    if length == 0 {
        return Ok(());
    }
    // Refused at once, not detached after some pieces were fed.
    if js_found_in(&wasm_bindgen::memory()) {
        js_forget_bytes();
        return Err(fail(place, EXPECTED, OWN_MEMORY.into()));
    }
    let mut piece = Vec::new();
    if piece.try_reserve_exact(length.min(PIECE as u64) as usize).is_err() {
        js_forget_bytes();
        return Err(fail(place, EXPECTED, LARGER_BYTES.into()));
    }
    // Nothing runs in JS between the pieces: each is of the bytes found,
    // copied into the same memory.
    let mut start = 0;
    while start < length {
        let end = length.min(start + PIECE as u64);
        piece.resize((end - start) as usize, 0);
        if !copy_found(&mut piece, start, false) {
            js_forget_bytes();
            return Err(fail(place, EXPECTED, DETACHED_WHILE_READ.into()));
        }
        feed(&piece);
        start = end;
    }
    js_forget_bytes();
    Ok(())
}

/// Reads a JS string as UTF-8 (lone surrogates become U+FFFD).
fn read_string(value: &JsValue, place: Place<'_>, expected: &str) -> Result<String, Error> {
    if !value.is_string() {
        return Err(mismatch(place, expected, value));
    }
    let units = value.unchecked_ref::<js_sys::JsString>().length() as usize;
    // wasm-bindgen's glue allocates a byte per UTF-16 unit, then three per
    // unit if the text is not ASCII (UTF-8 takes one to three).
    if units > MAX_UNITS || !room_for(units * 3) {
        return Err(fail(place, expected, LONGER_STRING.into()));
    }
    value.as_string().ok_or_else(|| mismatch(place, expected, value))
}

impl FromJs for Vec<u8> {
    const EXPECTED: &'static str = "Uint8Array";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        read_bytes(value, place, Self::EXPECTED)
    }
    fn from_item(list: &JsValue, index: u32, place: Place<'_>) -> Result<Self, Error> {
        read_bytes_item(list, index, place, Self::EXPECTED)
    }
}

impl FromJs for Multihash {
    const EXPECTED: &'static str = "Uint8Array (an encoded multihash)";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        Multihash::from_bytes(&read_bytes(value, place, Self::EXPECTED)?)
    }
    fn from_item(list: &JsValue, index: u32, place: Place<'_>) -> Result<Self, Error> {
        Multihash::from_bytes(&read_bytes_item(list, index, place, Self::EXPECTED)?)
    }
}

impl FromJs for String {
    const EXPECTED: &'static str = "string";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        read_string(value, place, Self::EXPECTED)
    }
}

impl FromJs for Cid {
    const EXPECTED: &'static str = "string (a CID)";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        Cid::from_text(read_string(value, place, Self::EXPECTED)?)
    }
}

impl FromJs for u64 {
    const EXPECTED: &'static str = "bigint in 0..2^64";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        if !value.is_bigint() {
            return Err(mismatch(place, Self::EXPECTED, value));
        }
        u64::try_from(value.clone()).map_err(|_| fail(place, Self::EXPECTED, "a bigint out of range".into()))
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
        let length = list_length(value, place, Self::EXPECTED)?;
        if length as usize > MAX_ITEMS {
            let expected = text!(Self::EXPECTED, " of at most ", MAX_ITEMS, " items");
            return Err(fail(place, &expected, text!("an Array of ", length, " items")));
        }
        // Grown item by item: a claimed length reserves nothing.
        let mut items = Vec::new();
        for i in 0..length {
            let item = read_item(value, i, Place::Item(&place, i as usize))?;
            if items.try_reserve(1).is_err() {
                return Err(fail(place, Self::EXPECTED, MORE_ITEMS.into()));
            }
            items.push(item);
        }
        Ok(items)
    }
}

/// A JS number that is an integer in the range of `$t`.
macro_rules! integer_from_js {
    ($($t:ty => $expected:literal),* $(,)?) => {$(
        impl FromJs for $t {
            const EXPECTED: &'static str = $expected;
            fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
                let number = value.as_f64().ok_or_else(|| mismatch(place, Self::EXPECTED, value))?;
                let int = number as $t;
                if int as f64 != number {
                    return Err(fail(place, Self::EXPECTED, format!("{number}")));
                }
                Ok(int)
            }
        }

        impl IntoJs for $t {
            fn into_js(self) -> Result<JsValue, Error> {
                Ok(JsValue::from_f64(self.into()))
            }
        }
    )*};
}

integer_from_js! {
    u16 => "number (an integer in 0..=65535)",
    u32 => "number (an integer in 0..=4294967295)",
    i32 => "number (an integer in -2147483648..=2147483647)",
}

impl FromJs for f64 {
    const EXPECTED: &'static str = "number";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        value.as_f64().ok_or_else(|| mismatch(place, Self::EXPECTED, value))
    }
}

impl IntoJs for f64 {
    fn into_js(self) -> Result<JsValue, Error> {
        Ok(JsValue::from_f64(self))
    }
}

impl FromJs for f32 {
    const EXPECTED: &'static str = "number (within f32's range)";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        let number = f64::from_js(value, place)?;
        let single = number as f32;
        if single.is_infinite() && number.is_finite() {
            return Err(fail(place, Self::EXPECTED, format!("{number}")));
        }
        Ok(single)
    }
}

impl IntoJs for f32 {
    fn into_js(self) -> Result<JsValue, Error> {
        Ok(JsValue::from_f64(self.into()))
    }
}

/// `undefined` (or `null`) is `None`: an optional key of a record.
impl<T: FromJs> FromJs for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        T::from_js(value, place).map(Some)
    }
}

/// `None` is `undefined` (a record leaves the key out).
impl<T: IntoJs> IntoJs for Option<T> {
    fn into_js(self) -> Result<JsValue, Error> {
        self.map_or(Ok(JsValue::UNDEFINED), T::into_js)
    }
}

/// A plain object's own enumerable keys, at most [`MAX_ITEMS`].
impl<T: FromJs> FromJs for alloc::collections::BTreeMap<String, T> {
    const EXPECTED: &'static str = "an object of string keys";
    fn from_js(value: &JsValue, place: Place<'_>) -> Result<Self, Error> {
        if !js_is_record(value) {
            return Err(mismatch(place, Self::EXPECTED, value));
        }
        let pairs = js_entries(value, MAX_ITEMS as u32 + 1).map_err(|e| threw(place, Self::EXPECTED, &e))?;
        let count = list_length(&pairs, place, Self::EXPECTED)?;
        if count as usize > 2 * MAX_ITEMS {
            let expected = text!(Self::EXPECTED, " with at most ", MAX_ITEMS, " keys");
            return Err(fail(place, &expected, "more keys".into()));
        }
        let mut map = alloc::collections::BTreeMap::new();
        for i in (0..count).step_by(2) {
            let key: String = read_item(&pairs, i, place)?;
            let item = read_item(&pairs, i + 1, Place::Field(&place, &key))?;
            map.insert(key, item);
        }
        Ok(map)
    }
}

impl<T: IntoJs> IntoJs for alloc::collections::BTreeMap<String, T> {
    fn into_js(self) -> Result<JsValue, Error> {
        let mut record = RecordOut::new();
        for (key, value) in self {
            record.field(&key, value)?;
        }
        Ok(record.finish())
    }
}

/// Checks that `value` is a plain object (not an Array, a typed array,
/// `null` or a revoked Proxy), before its fields are read with
/// [`read_field`]. For `#[derive(Value)]` records.
pub fn read_record(value: &JsValue, place: Place<'_>, expected: &str) -> Result<(), Error> {
    if js_is_record(value) {
        Ok(())
    } else {
        Err(mismatch(place, expected, value))
    }
}

/// Reads field `key` of a record as a `T` (its getter may run; a missing
/// key is `undefined`).
pub fn read_field<T: FromJs>(record: &JsValue, key: &str, place: Place<'_>) -> Result<T, Error> {
    let place = Place::Field(&place, key);
    let value = js_field(record, key).map_err(|e| threw(place, T::EXPECTED, &e))?;
    T::from_js(&value, place)
}

/// A JS object built field by field (a record, a map); `undefined` values
/// (a `None`) leave their key out.
pub struct RecordOut(JsValue);

impl RecordOut {
    /// A fresh, empty object.
    pub fn new() -> Self {
        Self(js_record_out())
    }

    /// Sets `key` (defined as an own data property: no setter runs).
    pub fn field(&mut self, key: &str, value: impl IntoJs) -> Result<(), Error> {
        let value = value.into_js()?;
        if !value.is_undefined() {
            js_set_field(&self.0, key, value);
        }
        Ok(())
    }

    /// The object.
    pub fn finish(self) -> JsValue {
        self.0
    }
}

impl Default for RecordOut {
    fn default() -> Self {
        Self::new()
    }
}

/// A workflow step's JS object, `{ done, output, segmentTime, totalTime }`
/// (see `workflow::js::step`); `None` times are `undefined`.
pub fn step_object(done: bool, output: JsValue, segment_time: Option<f64>, total_time: Option<f64>) -> JsValue {
    js_step(done, output, segment_time, total_time)
}

/// Reads a choice (a `#[derive(Value)]` enum) as one of `names`, its index.
pub fn read_choice(value: &JsValue, place: Place<'_>, names: &[&str], expected: &str) -> Result<usize, Error> {
    if !value.is_string() {
        return Err(mismatch(place, expected, value));
    }
    // At most the longest name is compared: a huge string is not copied.
    let text: &js_sys::JsString = value.unchecked_ref();
    let longest = names.iter().map(|n| n.len()).max().unwrap_or(0);
    if text.length() as usize <= longest {
        if let Some(found) = value.as_string() {
            if let Some(index) = names.iter().position(|n| *n == found) {
                return Ok(index);
            }
            return Err(fail(place, expected, text!("\"", found, "\"")));
        }
    }
    Err(fail(place, expected, "another string".into()))
}

/// The error for an output JS refused to hold (too large for the engine).
fn refused(exception: &JsValue) -> Error {
    fail(Place::Named("output"), "a value JS can hold", thrown("one it refused: ", exception))
}

fn bytes_into_js(bytes: &[u8]) -> Result<JsValue, Error> {
    js_bytes_out(bytes).map_err(|e| refused(&e))
}

impl IntoJs for Vec<u8> {
    fn into_js(self) -> Result<JsValue, Error> {
        bytes_into_js(&self)
    }
}

impl IntoJs for Multihash {
    fn into_js(self) -> Result<JsValue, Error> {
        bytes_into_js(self.as_bytes())
    }
}

impl IntoJs for String {
    fn into_js(self) -> Result<JsValue, Error> {
        js_string_out(&self).map_err(|e| refused(&e))
    }
}

impl IntoJs for Cid {
    fn into_js(self) -> Result<JsValue, Error> {
        // At most about a hundred characters: no engine refuses that.
        Ok(JsValue::from_str(self.as_str()))
    }
}

impl IntoJs for u64 {
    fn into_js(self) -> Result<JsValue, Error> {
        Ok(JsValue::from(self))
    }
}

impl IntoJs for bool {
    fn into_js(self) -> Result<JsValue, Error> {
        Ok(JsValue::from_bool(self))
    }
}

impl<T: IntoJs> IntoJs for Vec<T> {
    fn into_js(self) -> Result<JsValue, Error> {
        let array = js_sys::Array::new_with_length(self.len() as u32);
        for (i, item) in self.into_iter().enumerate() {
            array.set(i as u32, item.into_js()?);
        }
        Ok(array.into())
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
    fn into_js(self) -> Result<JsValue, Error> {
        Ok(self.0)
    }
}

/// Reads an operation's config from a JS object (`undefined` or `null`
/// means all defaults); keys and values are checked like anywhere else.
pub fn config_from_js(operation: &str, keys: &[ConfigKey], value: &JsValue) -> Result<Config, Error> {
    if value.is_undefined() || value.is_null() {
        return Config::resolve(operation, keys, []);
    }
    const EXPECTED: &str = "an object such as { key: \"value\" }";
    let place = text!(operation, " config");
    let place = Place::Named(&place);
    // Its own enumerable keys and values, flat in a fresh Array (reading
    // that runs no caller code); one more pair than keys are declared is
    // enough to report an unknown key.
    let pairs = match value.is_object() {
        true => js_entries(value, keys.len() as u32 + 1).map_err(|e| threw(place, EXPECTED, &e))?,
        false => JsValue::UNDEFINED,
    };
    if pairs.is_undefined() {
        return Err(mismatch(place, EXPECTED, value));
    }
    let count = list_length(&pairs, place, EXPECTED)?;
    let mut resolved: Vec<(String, String)> = Vec::new();
    for i in (0..count).step_by(2) {
        let key: String = read_item(&pairs, i, place)?;
        let text: String = read_item(&pairs, i + 1, Place::Named(&text!(operation, " config `", key, "`")))?;
        resolved.push((key, text));
    }
    Config::resolve(operation, keys, resolved.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Checks the number of positional inputs a JS caller passed.
pub fn check_arity(operation: &str, expected: usize, found: usize) -> Result<(), Error> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::Arity { operation: operation.into(), expected: text!(expected), found })
    }
}

/// Turns a Braid error into a JS `Error` with the same message.
pub fn to_js_error(error: Error) -> JsError {
    JsError::new(&error.message())
}

/// What an export that returns a `Promise` returns: always `Ok`. A
/// `Result` crosses as several values, and V8 then does not inline the call
/// into optimised JS. Inlined, a call whose JS imports let the garbage
/// collector deoptimise the caller crashes Node 20's V8 (`Fatal error ...
/// unreachable code` in `Deoptimizer::DoComputeBuiltinContinuation`): a loop
/// of a few hundred thousand `new Workflow().next(...)` did, every time.
pub type Promising = Result<js_sys::Promise, JsError>;

/// A settled `Promise`: resolved with the value, or rejected with a JS
/// `Error` carrying the message. For APIs that are asynchronous in JS but
/// finish synchronously in Wasm (no microtask hop inside the module); as
/// an export returns it ([`Promising`]).
pub fn settle(result: Result<JsValue, Error>) -> Promising {
    Ok(match result {
        Ok(value) => js_sys::Promise::resolve(&value),
        Err(error) => js_sys::Promise::reject(&JsValue::from(to_js_error(error))),
    })
}

/// The outputs of `f` on each item of the JS Array `list`, as a JS Array;
/// the first error stops it, with the item's index in its message (`what
/// item 3: ...`). For batches: one boundary crossing for many runs.
pub fn for_each_item(
    list: &JsValue,
    what: &str,
    mut f: impl FnMut(&JsValue) -> Result<JsValue, Error>,
) -> Result<JsValue, Error> {
    const EXPECTED: &str = "an Array of input lists";
    let place = Place::Named(what);
    let length = list_length(list, place, EXPECTED)?;
    let outputs = js_sys::Array::new();
    for i in 0..length {
        let item = Place::Item(&place, i as usize);
        let inputs = js_item(list, i).map_err(|e| threw(item, EXPECTED, &e))?;
        let output = f(&inputs).map_err(|e| Error::invalid_input(what, text!("item ", i, ": ", e.message())))?;
        outputs.set(i, output);
    }
    Ok(outputs.into())
}

/// Checks that `value` is a JS Array (or a Proxy of one) of exactly
/// `expected` positional inputs; read them with [`read_item`].
pub fn positional(value: &JsValue, expected: usize, what: &str) -> Result<(), Error> {
    const EXPECTED: &str = "an Array of inputs";
    let place = Place::Named(what);
    let found = list_length(value, place, EXPECTED)?;
    check_arity(what, expected, found as usize)
}

/// Milliseconds from `performance.now()` (Node and browsers).
pub fn now_ms() -> f64 {
    performance_now()
}
