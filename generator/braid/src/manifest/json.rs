//! Untrusted bytes to one JSON value: the manifest size limit, UTF-8 with
//! the first bad byte located, JSON syntax, and no object key twice (JSON
//! readers disagree on which of two counts). [`super::parse`] reads fields
//! from the value.

use serde_json::{Map, Value};

use super::MAX_MANIFEST_BYTES;
use crate::diagnostic::{quote, Diagnostic};

/// Reads untrusted bytes as manifest text: the size limit first, then
/// UTF-8 ([`utf8`]). The error is one diagnostic, as a list like
/// [`super::validate`]'s.
pub fn text(bytes: &[u8]) -> Result<&str, Vec<Diagnostic>> {
    if bytes.len() > MAX_MANIFEST_BYTES {
        return Err(vec![too_large(bytes.len())]);
    }
    utf8(bytes)
}

/// Reads bytes as UTF-8 text. Bytes that are not UTF-8 get a diagnostic at
/// the first bad byte (offset, line and column), never a silent replacement.
pub fn utf8(bytes: &[u8]) -> Result<&str, Vec<Diagnostic>> {
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let valid = std::str::from_utf8(&bytes[..offset]).expect("valid up to here");
        let line_start = valid.rfind('\n').map_or(0, |i| i + 1);
        let mut d = Diagnostic::new("", format!("the manifest is not UTF-8 text: invalid byte at offset {offset}"))
            .expected("a JSON document in UTF-8")
            .found(format!("byte 0x{:02x} at offset {offset}", bytes[offset]))
            .hint("save the file as UTF-8");
        d.line = Some(valid.matches('\n').count() + 1);
        d.column = Some(valid[line_start..].chars().count() + 1);
        vec![d]
    })
}

fn too_large(len: usize) -> Diagnostic {
    Diagnostic::new("", "the manifest is too large")
        .expected(format!("at most {MAX_MANIFEST_BYTES} bytes (1 MiB)"))
        .found(if len > MAX_MANIFEST_BYTES + 1 { format!("{len} bytes") } else { "more than that".to_string() })
}

/// Reads `text` as one JSON value, within the size limit, with repeated
/// object keys refused ([`NoDuplicates`]). The error is one diagnostic, as
/// a list like [`text`]'s.
pub fn read(text: &str) -> Result<Value, Vec<Diagnostic>> {
    if text.len() > MAX_MANIFEST_BYTES {
        return Err(vec![too_large(text.len())]);
    }
    match serde_json::from_str::<NoDuplicates>(text) {
        Ok(NoDuplicates(v)) => Ok(v),
        Err(e) => {
            let mut d = Diagnostic::new("", format!("not valid JSON: {}", strip_position(&e.to_string())))
                .hint("a manifest is a JSON object with `name`, `version` and `segments`");
            if e.line() > 0 {
                d.line = Some(e.line());
                d.column = Some(e.column().max(1));
            }
            Err(vec![d])
        }
    }
}

/// A JSON value read with repeated object keys refused: serde_json keeps
/// the last of them, other readers the first, so a manifest that repeats a
/// key means different workflows to different tools.
struct NoDuplicates(Value);

impl<'de> serde::Deserialize<'de> for NoDuplicates {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicatesVisitor).map(NoDuplicates)
    }
}

struct NoDuplicatesVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicatesVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(NoDuplicates(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "the key {} appears twice in one object; JSON readers disagree on which value counts",
                    quote(&key)
                )));
            }
            let NoDuplicates(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// serde_json appends "at line L column C"; we report those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// A short description of a JSON value's type, for "found".
pub fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", quote(s)),
        Value::Array(a) => format!("an array of {} item(s)", a.len()),
        Value::Object(_) => "an object".into(),
    }
}
