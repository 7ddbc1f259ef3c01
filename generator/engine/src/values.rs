//! JSON as runs read and write it (bytes as base64; record keys and enum
//! cases in lowerCamelCase, as the npm packages name them), and the
//! dynamic API's values of components built before `run-packed`.

use base64::Engine as _;
pub use braid_schema::camel;
use serde_json::{Map, Number, Value as Json};
use wasmtime::component::{Type, Val};

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Whether `ty` is `list<u8>`: bytes.
pub fn is_bytes(ty: &Type) -> bool {
    matches!(ty, Type::List(list) if list.ty() == Type::U8)
}

/// Bytes given in JSON: a base64 string.
pub(crate) fn json_bytes(json: &Json, place: &str) -> Result<Vec<u8>, String> {
    match json {
        Json::String(s) => BASE64.decode(s).map_err(|e| format!("{place}: not base64 ({e})")),
        _ => Err(format!("{place}: expected bytes as a base64 string, found {}", kind(json))),
    }
}

/// Bytes as JSON: base64, except that an empty `list<u8>` is `[]` (as a
/// `Val` it cannot be told from an empty list of anything else).
pub(crate) fn bytes_json(bytes: &[u8]) -> Json {
    if bytes.is_empty() {
        Json::Array(Vec::new())
    } else {
        Json::String(BASE64.encode(bytes))
    }
}

/// Bytes as a `list<u8>`.
pub(crate) fn bytes_val(bytes: Vec<u8>) -> Val {
    Val::List(bytes.into_iter().map(Val::U8).collect())
}

/// The bytes of a `list<u8>`, if `val` is one.
pub fn val_bytes(val: &Val) -> Option<Vec<u8>> {
    let Val::List(items) = val else { return None };
    items.iter().map(|v| if let Val::U8(b) = v { Some(*b) } else { None }).collect()
}

/// A component's value as JSON (bytes as base64, keys in lowerCamelCase).
pub fn to_json(val: &Val) -> Json {
    match val {
        Val::Bool(b) => Json::Bool(*b),
        Val::U8(n) => Json::from(*n),
        Val::U64(n) => Json::from(*n),
        Val::Float64(n) => float_json(*n),
        Val::String(s) => Json::String(s.clone()),
        Val::List(items) if !items.is_empty() && items.iter().all(|v| matches!(v, Val::U8(_))) => {
            bytes_json(&val_bytes(val).unwrap_or_default())
        }
        Val::List(items) | Val::Tuple(items) => Json::Array(items.iter().map(to_json).collect()),
        Val::Record(fields) => {
            Json::Object(fields.iter().map(|(k, v)| (camel(k), to_json(v))).collect::<Map<String, Json>>())
        }
        Val::Enum(name) => Json::String(camel(name)),
        Val::Option(inner) => inner.as_deref().map_or(Json::Null, to_json),
        other => Json::String(format!("{other:?}")),
    }
}

/// [`to_json`] as text, record keys in the order the record declares
/// them (as the npm packages and `braid run` print them).
pub fn to_json_text(val: &Val) -> String {
    match val {
        Val::Record(fields) => {
            let items: Vec<String> =
                fields.iter().map(|(k, v)| format!("{}:{}", Json::String(camel(k)), to_json_text(v))).collect();
            format!("{{{}}}", items.join(","))
        }
        Val::List(items) | Val::Tuple(items) if !matches!(to_json(val), Json::String(_)) => {
            format!("[{}]", items.iter().map(to_json_text).collect::<Vec<_>>().join(","))
        }
        Val::Option(Some(inner)) => to_json_text(inner),
        other => to_json(other).to_string(),
    }
}

/// A float as JS prints it: a whole one without a fraction, a non-finite
/// one `null`.
pub(crate) fn float_json(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Json::from(n as i64)
    } else {
        Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

/// About how many bytes `val` holds (its bytes, strings and scalars).
pub fn size(val: &Val) -> usize {
    match val {
        Val::String(s) => s.len(),
        Val::List(items) | Val::Tuple(items) => items.iter().map(size).sum(),
        Val::Record(fields) => fields.iter().map(|(_, v)| size(v)).sum(),
        Val::Option(Some(inner)) => size(inner),
        Val::U8(_) | Val::Bool(_) => 1,
        _ => 8,
    }
}

pub(crate) fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

pub(crate) fn truncate(text: &str) -> String {
    text.chars().take(64).collect()
}
