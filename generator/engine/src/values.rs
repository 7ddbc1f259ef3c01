//! Values between JSON and a component's: the inputs of a run as callers
//! give them (JSON, bytes as base64; record keys and enum cases in
//! lowerCamelCase, as the npm packages name them) checked against the
//! types `run` declares, and its output back as JSON.

use base64::Engine as _;
use serde_json::{Map, Number, Value as Json};
use wasmtime::component::{Type, Val};

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Whether `ty` is `list<u8>`: bytes.
pub fn is_bytes(ty: &Type) -> bool {
    matches!(ty, Type::List(list) if list.ty() == Type::U8)
}

/// Bytes given in JSON: a base64 string.
fn json_bytes(json: &Json, place: &str) -> Result<Vec<u8>, String> {
    match json {
        Json::String(s) => BASE64.decode(s).map_err(|e| format!("{place}: not base64 ({e})")),
        _ => Err(format!("{place}: expected bytes as a base64 string, found {}", kind(json))),
    }
}

/// `json` as a value of type `ty`, or what is wrong with it at `place`.
pub fn from_json(json: &Json, ty: &Type, place: &str) -> Result<Val, String> {
    let wrong = |expected: &str| Err(format!("{place}: expected {expected}, found {}", kind(json)));
    Ok(match ty {
        Type::Bool => match json {
            Json::Bool(b) => Val::Bool(*b),
            _ => return wrong("a boolean"),
        },
        Type::U8 => match json.as_u64().and_then(|n| u8::try_from(n).ok()) {
            Some(n) => Val::U8(n),
            None => return wrong("an integer in 0..=255"),
        },
        Type::U64 => match json {
            Json::Number(n) if n.as_u64().is_some() => Val::U64(n.as_u64().unwrap_or_default()),
            Json::String(s) if s.parse::<u64>().is_ok() => Val::U64(s.parse().unwrap_or_default()),
            _ => return wrong("an integer in 0..2^64 (a number, or a string of digits)"),
        },
        Type::Float64 => match json.as_f64() {
            Some(n) => Val::Float64(n),
            None => return wrong("a number"),
        },
        Type::String => match json {
            Json::String(s) => Val::String(s.clone()),
            _ => return wrong("a string"),
        },
        ty if is_bytes(ty) => bytes_val(json_bytes(json, place)?),
        Type::List(list) => match json {
            Json::Array(items) => Val::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| from_json(item, &list.ty(), &format!("{place}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong("an array"),
        },
        Type::Tuple(tuple) => match json {
            Json::Array(items) if items.len() == tuple.types().len() => Val::Tuple(
                items
                    .iter()
                    .zip(tuple.types())
                    .enumerate()
                    .map(|(i, (item, ty))| from_json(item, &ty, &format!("{place}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong(&format!("an array of {}", tuple.types().len())),
        },
        Type::Option(option) => match json {
            Json::Null => Val::Option(None),
            other => Val::Option(Some(Box::new(from_json(other, &option.ty(), place)?))),
        },
        Type::Record(record) => {
            let Json::Object(object) = json else { return wrong("an object") };
            let mut fields = Vec::new();
            for field in record.fields() {
                let key = camel(field.name);
                let value = match (object.get(&key), &field.ty) {
                    (Some(value), ty) => from_json(value, ty, &format!("{place}.{key}"))?,
                    (None, Type::Option(_)) => Val::Option(None),
                    (None, _) => return Err(format!("{place}: the key `{key}` is missing")),
                };
                fields.push((field.name.to_string(), value));
            }
            if let Some(extra) = object.keys().find(|k| !record.fields().any(|f| camel(f.name) == **k)) {
                return Err(format!("{place}: unknown key `{}`", truncate(extra)));
            }
            Val::Record(fields)
        }
        Type::Enum(cases) => match json {
            Json::String(s) => match cases.names().find(|name| camel(name) == *s) {
                Some(name) => Val::Enum(name.to_string()),
                None => {
                    let names: Vec<String> = cases.names().map(|n| format!("\"{}\"", camel(n))).collect();
                    return Err(format!("{place}: `{}` is not one of {}", truncate(s), names.join(", ")));
                }
            },
            _ => return wrong("a string"),
        },
        other => return Err(format!("{place}: Braid's components take no {other:?}")),
    })
}

/// One input of a run: bytes as they are (a `list<u8>` parameter, passed
/// to the guest as one block where the call is typed), or any value.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Bytes(Vec<u8>),
    Value(Val),
}

impl Input {
    /// What it counts against the input limit.
    pub fn size(&self) -> usize {
        match self {
            Self::Bytes(bytes) => bytes.len(),
            Self::Value(val) => size(val),
        }
    }

    /// As a value of the dynamic API.
    pub fn into_val(self) -> Val {
        match self {
            Self::Bytes(bytes) => bytes_val(bytes),
            Self::Value(val) => val,
        }
    }

    /// The input of type `ty` that `json` gives (bytes as base64).
    pub fn from_json(json: &Json, ty: &Type, place: &str) -> Result<Self, String> {
        if is_bytes(ty) {
            return json_bytes(json, place).map(Self::Bytes);
        }
        from_json(json, ty, place).map(Self::Value)
    }

    /// The input of type `ty` that `bytes` (a file, a request's part)
    /// give: bytes as they are, text as UTF-8, anything else as JSON.
    pub fn from_bytes(bytes: Vec<u8>, ty: &Type, place: &str) -> Result<Self, String> {
        match ty {
            ty if is_bytes(ty) => Ok(Self::Bytes(bytes)),
            Type::String => String::from_utf8(bytes)
                .map(|s| Self::Value(Val::String(s)))
                .map_err(|_| format!("{place}: not UTF-8 text")),
            _ => {
                let json: Json = serde_json::from_slice(&bytes).map_err(|e| format!("{place}: not JSON ({e})"))?;
                Self::from_json(&json, ty, place)
            }
        }
    }
}

/// A run's output: the bytes of a `list<u8>` output as they came (the
/// typed path), or a value of the dynamic API. As bytes, an output of N
/// bytes takes N bytes of the host's memory, not N `Val`s of 40 bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Bytes(Vec<u8>),
    Value(Val),
}

impl Output {
    /// Its bytes, if it is a `list<u8>`.
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Self::Bytes(bytes) => Some(bytes),
            Self::Value(val) => val_bytes(&val),
        }
    }

    /// As JSON text: [`to_json_text`] of the value (bytes as base64).
    pub fn to_json_text(&self) -> String {
        match self {
            Self::Bytes(bytes) => bytes_json(bytes).to_string(),
            Self::Value(val) => to_json_text(val),
        }
    }
}

/// Bytes as JSON: base64, except that an empty `list<u8>` is `[]` (as a
/// `Val` it cannot be told from an empty list of anything else).
fn bytes_json(bytes: &[u8]) -> Json {
    if bytes.is_empty() {
        Json::Array(Vec::new())
    } else {
        Json::String(BASE64.encode(bytes))
    }
}

/// Bytes as a `list<u8>`.
fn bytes_val(bytes: Vec<u8>) -> Val {
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
        // As JS prints a number: a whole one without a fraction.
        Val::Float64(n) if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 => Json::from(*n as i64),
        Val::Float64(n) => Number::from_f64(*n).map_or(Json::Null, Json::Number),
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

/// A WIT kebab-case name as the npm packages spell it: `file-cid` is `fileCid`.
pub fn camel(kebab: &str) -> String {
    let mut out = String::with_capacity(kebab.len());
    let mut upper = false;
    for c in kebab.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_kept_as_bytes_read_as_the_same_list_of_u8() {
        for bytes in [vec![], vec![0, 1, 255], b"hello".to_vec()] {
            let kept = Output::Bytes(bytes.clone());
            let listed = Output::Value(bytes_val(bytes.clone()));
            assert_eq!(kept.to_json_text(), listed.to_json_text());
            assert_eq!(kept.into_bytes(), Some(bytes.clone()));
            assert_eq!(listed.into_bytes(), Some(bytes));
        }
        assert_eq!(Output::Bytes(b"hi".to_vec()).to_json_text(), "\"aGk=\"");
        assert_eq!(Output::Value(Val::String("x".into())).into_bytes(), None);
    }

    #[test]
    fn kebab_names_are_the_npm_packages_camel_case() {
        assert_eq!(camel("file-cid"), "fileCid");
        assert_eq!(camel("width"), "width");
        assert_eq!(camel("a-b-c"), "aBC");
    }
}
