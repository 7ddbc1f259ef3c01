//! The dynamic API's values of components built before `run-packed`, as
//! JSON the way [`braid_schema::wire`] writes every run's.

pub use braid_schema::camel;
pub(crate) use braid_schema::wire::bytes_json;
use braid_schema::wire::float_json;
use serde_json::{Map, Value as Json};
use wasmtime::component::{Type, Val};

/// Whether `ty` is `list<u8>`: bytes.
pub fn is_bytes(ty: &Type) -> bool {
    matches!(ty, Type::List(list) if list.ty() == Type::U8)
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
