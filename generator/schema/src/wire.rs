//! A run's values on the wire, defined once for every host that runs a
//! workflow: the JSON a run takes and gives (bytes as base64; record keys
//! and enum cases in lowerCamelCase, as the npm packages name them; a
//! whole float without a fraction) and Braid's packed encoding (the one
//! `run-packed` and `braid_support::component::Packed` use), converted
//! into each other as a [`Shape`] says. Braid's executor takes its shapes
//! from a component's types, a workflow's HTTP handler from the generated
//! crate; both read a request's inputs with [`inputs`], so a workflow
//! answers the same on either.
//!
//! The packed encoding: little-endian; `bool` and `u8` a byte, `u64` and
//! `f64` eight; a `string` or `list` its length (`u32`: bytes, or items)
//! then its contents; an `option` a byte (0 or 1) then its value; a
//! `tuple` or `record` its members in order; an `enum` its case's index
//! (`u32`).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use data_encoding::BASE64;
use serde_json::Value as Json;

use crate::{camel, write_json_float, write_json_string};

/// The largest input of a run unless its host says otherwise, in bytes
/// (16 MiB): the executor's and `braid serve`'s `--input-limit`, and the
/// largest request body a workflow's HTTP function reads unless its build
/// sets another (`braid build --http-input-limit`).
pub const DEFAULT_INPUT_LIMIT: usize = 16 << 20;

/// The type of a value on the wire, as WIT names its parts (records'
/// fields and enums' cases in kebab case; JSON gives them in
/// lowerCamelCase).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// `bool`: `true` or `false`.
    Bool,
    /// `u8`: an integer in 0..=255.
    U8,
    /// `u64`: a number, or a string of digits (beyond 2^53).
    U64,
    /// `f64`: a number.
    F64,
    /// `string`: a string.
    String,
    /// `list<u8>`: base64 in JSON.
    Bytes,
    /// `list<T>`: an array.
    List(Box<Shape>),
    /// `tuple<...>`: an array of its members.
    Tuple(Vec<Shape>),
    /// `option<T>`: `null`, or the value.
    Option(Box<Shape>),
    /// A `record`: an object keyed by its fields' names.
    Record(Vec<(String, Shape)>),
    /// An `enum`: its case's name.
    Enum(Vec<String>),
}

/// One input of a run, in the form its type crosses into the guest in:
/// bytes as they are (a `list<u8>`), text (a `string`), or any other
/// value in the packed encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A `list<u8>`'s bytes.
    Bytes(Vec<u8>),
    /// A `string`'s text.
    Text(String),
    /// Any other value, packed.
    Packed(Vec<u8>),
}

impl Input {
    /// What it counts against an input limit: its bytes, its text, or its
    /// encoding.
    pub fn size(&self) -> usize {
        match self {
            Self::Bytes(bytes) | Self::Packed(bytes) => bytes.len(),
            Self::Text(text) => text.len(),
        }
    }

    /// The input of shape `shape` that `json` gives (bytes as base64), or
    /// what is wrong with it at `place`.
    pub fn from_json(json: &Json, shape: &Shape, place: &str) -> Result<Self, String> {
        match shape {
            Shape::Bytes => json_bytes(json, place).map(Self::Bytes),
            Shape::String => match json {
                Json::String(s) => Ok(Self::Text(s.clone())),
                _ => Err(format!("{place}: expected a string, found {}", kind(json))),
            },
            shape => {
                let mut packed = Vec::new();
                put_json(json, shape, place, &mut packed)?;
                Ok(Self::Packed(packed))
            }
        }
    }

    /// The input of shape `shape` that `bytes` (a file, a request's part)
    /// give: bytes as they are, text as UTF-8, anything else as JSON.
    pub fn from_bytes(bytes: Vec<u8>, shape: &Shape, place: &str) -> Result<Self, String> {
        match shape {
            Shape::Bytes => Ok(Self::Bytes(bytes)),
            Shape::String => String::from_utf8(bytes).map(Self::Text).map_err(|_| format!("{place}: not UTF-8 text")),
            _ => {
                let json: Json = serde_json::from_slice(&bytes).map_err(|e| format!("{place}: not JSON ({e})"))?;
                Self::from_json(&json, shape, place)
            }
        }
    }

    /// Appends it to a run's packed inputs.
    pub fn pack(&self, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            Self::Bytes(bytes) => put_bytes(bytes, out),
            Self::Text(text) => put_bytes(text.as_bytes(), out),
            Self::Packed(bytes) => {
                out.extend_from_slice(bytes);
                Ok(())
            }
        }
    }
}

/// A run's inputs as a request sent them.
#[derive(Debug)]
pub enum Sent<'a> {
    /// JSON: an array in order, or an object by input name.
    Json(&'a [u8]),
    /// `multipart/form-data`: one part per input, by name.
    Parts(Vec<(String, Vec<u8>)>),
    /// The raw bytes of a workflow's one `Bytes` input.
    Raw(Vec<u8>),
}

/// Why a request's inputs cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputsError {
    /// What was sent does not hold this workflow's inputs (HTTP 400).
    Bad(String),
    /// A raw body, for a workflow that is not of one `Bytes` input (HTTP 415).
    Unsupported(String),
}

impl core::fmt::Display for InputsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Bad(why) | Self::Unsupported(why) => f.write_str(why),
        }
    }
}

/// The inputs of a workflow whose parameters are `params` (WIT names and
/// shapes) that `sent` holds: JSON (bytes as base64), a part per input
/// (raw bytes for a `Bytes` input, text for a `String` one, JSON for the
/// rest), or the raw body of a workflow of one `Bytes` input.
pub fn inputs(params: &[(String, Shape)], sent: Sent<'_>) -> Result<Vec<Input>, InputsError> {
    let place = |name: &str| format!("input {}", camel(name));
    match sent {
        Sent::Raw(body) => match params {
            [(_, Shape::Bytes)] => Ok(Vec::from([Input::Bytes(body)])),
            _ => Err(InputsError::Unsupported(format!(
                "this workflow takes {} input(s) ({}): send them as JSON (Content-Type: application/json), an \
                 array in order or an object by name, or as multipart/form-data by name; only a workflow of one \
                 Bytes input takes a raw body",
                params.len(),
                names(params)
            ))),
        },
        Sent::Parts(parts) => by_name(params, parts)?
            .into_iter()
            .zip(params)
            .map(|(part, (name, shape))| Input::from_bytes(part, shape, &place(name)))
            .collect::<Result<_, String>>()
            .map_err(InputsError::Bad),
        Sent::Json(body) => {
            let value: Json =
                serde_json::from_slice(body).map_err(|e| InputsError::Bad(format!("the body is not JSON: {e}")))?;
            let given: Vec<Json> = match value {
                Json::Array(items) => items,
                Json::Object(object) => by_name(params, object.into_iter().collect())?,
                _ => {
                    return Err(InputsError::Bad(
                        "the inputs are a JSON array (in order) or an object (by input name)".into(),
                    ))
                }
            };
            if given.len() != params.len() {
                return Err(InputsError::Bad(format!(
                    "this workflow takes {} input(s) ({}), found {}",
                    params.len(),
                    names(params),
                    given.len()
                )));
            }
            given
                .iter()
                .zip(params)
                .map(|(value, (name, shape))| Input::from_json(value, shape, &place(name)))
                .collect::<Result<_, _>>()
                .map_err(InputsError::Bad)
        }
    }
}

/// `given` (by input name, lowerCamelCase) in the order of `params`: each
/// once, none missing, none unknown.
fn by_name<T>(params: &[(String, Shape)], mut given: Vec<(String, T)>) -> Result<Vec<T>, InputsError> {
    let mut ordered = Vec::with_capacity(params.len());
    for (name, _) in params {
        let key = camel(name);
        let mut found = given.iter().enumerate().filter(|(_, (n, _))| *n == key).map(|(i, _)| i);
        let (Some(at), None) = (found.next(), found.next()) else {
            let count = given.iter().filter(|(n, _)| *n == key).count();
            return Err(InputsError::Bad(if count == 0 {
                format!("the input `{key}` is missing; this workflow takes {}", names(params))
            } else {
                format!("the input `{key}` is given {count} times; give it once")
            }));
        };
        ordered.push(given.swap_remove(at).1);
    }
    if let Some((extra, _)) = given.first() {
        return Err(InputsError::Bad(format!(
            "unknown input `{}`; this workflow takes {}",
            truncate(extra),
            names(params)
        )));
    }
    Ok(ordered)
}

/// The inputs' names, as JSON gives them.
fn names(params: &[(String, Shape)]) -> String {
    params.iter().map(|(n, _)| camel(n)).collect::<Vec<_>>().join(", ")
}

/// The essence of a media type (`type/subtype`, no parameters), in lower
/// case, as RFC 9110 compares them: `APPLICATION/JSON; charset=utf-8` is
/// `application/json`, `application/jsonx` is not; empty for none.
pub fn media_type(value: &str) -> String {
    value.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether the `Accept` values `accept` name `media_type` itself (not
/// through a wildcard) with a weight above zero.
pub fn accepts_exactly(accept: &[&str], media_type: &str) -> bool {
    accept.iter().flat_map(|v| v.split(',')).any(|range| {
        let mut params = range.split(';');
        let named = self::media_type(params.next().unwrap_or("")) == media_type;
        let refused = params
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .find_map(|q| weight_is_zero(q.trim()))
            .unwrap_or(false);
        named && !refused
    })
}

/// Whether an `Accept` weight (RFC 9110's `qvalue`: `0`, `0.5`, `1.000`)
/// is zero; `None` when it is not a weight (then it is ignored). Read as
/// its digits, not parsed as a float: float parsing would put core's
/// tables (10 KiB) in every HTTP function's memory image.
fn weight_is_zero(q: &str) -> Option<bool> {
    let (whole, fraction) = q.split_once('.').unwrap_or((q, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (!whole.is_empty() && digits(whole) && digits(fraction)).then(|| q.bytes().all(|b| b == b'0' || b == b'.'))
}

/// Appends a length, or an enum's index.
pub fn put_len(n: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let n = u32::try_from(n).map_err(|_| format!("{n} is over the 4 GiB a component's value can hold"))?;
    out.extend_from_slice(&n.to_le_bytes());
    Ok(())
}

/// Appends bytes (a `list<u8>`, or a string's UTF-8).
pub fn put_bytes(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    put_len(bytes.len(), out)?;
    out.extend_from_slice(bytes);
    Ok(())
}

/// Appends `json` as a value of shape `shape`, or says what is wrong with
/// it at `place`.
pub fn put_json(json: &Json, shape: &Shape, place: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let wrong = |expected: &str| Err(format!("{place}: expected {expected}, found {}", kind(json)));
    match shape {
        Shape::Bool => match json {
            Json::Bool(b) => out.push(u8::from(*b)),
            _ => return wrong("a boolean"),
        },
        Shape::U8 => match json.as_u64().and_then(|n| u8::try_from(n).ok()) {
            Some(n) => out.push(n),
            None => return wrong("an integer in 0..=255"),
        },
        Shape::U64 => match json {
            Json::Number(n) if n.as_u64().is_some() => {
                out.extend_from_slice(&n.as_u64().unwrap_or_default().to_le_bytes())
            }
            Json::String(s) if s.parse::<u64>().is_ok() => {
                out.extend_from_slice(&s.parse::<u64>().unwrap_or_default().to_le_bytes())
            }
            _ => return wrong("an integer in 0..2^64 (a number, or a string of digits)"),
        },
        Shape::F64 => match json.as_f64() {
            Some(n) => out.extend_from_slice(&n.to_le_bytes()),
            None => return wrong("a number"),
        },
        Shape::String => match json {
            Json::String(s) => put_bytes(s.as_bytes(), out)?,
            _ => return wrong("a string"),
        },
        Shape::Bytes => put_bytes(&json_bytes(json, place)?, out)?,
        Shape::List(item) => match json {
            Json::Array(items) => {
                put_len(items.len(), out)?;
                for (i, value) in items.iter().enumerate() {
                    put_json(value, item, &format!("{place}[{i}]"), out)?;
                }
            }
            _ => return wrong("an array"),
        },
        Shape::Tuple(members) => match json {
            Json::Array(items) if items.len() == members.len() => {
                for (i, (value, shape)) in items.iter().zip(members).enumerate() {
                    put_json(value, shape, &format!("{place}[{i}]"), out)?;
                }
            }
            _ => return wrong(&format!("an array of {}", members.len())),
        },
        Shape::Option(inner) => match json {
            Json::Null => out.push(0),
            other => {
                out.push(1);
                put_json(other, inner, place, out)?;
            }
        },
        Shape::Record(fields) => {
            let Json::Object(object) = json else { return wrong("an object") };
            for (name, shape) in fields {
                let key = camel(name);
                match (object.get(&key), shape) {
                    (Some(value), shape) => put_json(value, shape, &format!("{place}.{key}"), out)?,
                    (None, Shape::Option(_)) => out.push(0),
                    (None, _) => return Err(format!("{place}: the key `{key}` is missing")),
                }
            }
            if let Some(extra) = object.keys().find(|k| !fields.iter().any(|(name, _)| camel(name) == **k)) {
                return Err(format!("{place}: unknown key `{}`", truncate(extra)));
            }
        }
        Shape::Enum(cases) => match json {
            Json::String(s) => match cases.iter().position(|name| camel(name) == *s) {
                Some(index) => put_len(index, out)?,
                None => {
                    let names: Vec<String> = cases.iter().map(|n| format!("\"{}\"", camel(n))).collect();
                    return Err(format!("{place}: `{}` is not one of {}", truncate(s), names.join(", ")));
                }
            },
            _ => return wrong("a string"),
        },
    }
    Ok(())
}

/// Packed bytes being read; every read checks that they are there, so
/// malformed bytes (from a hostile or broken component) are an error,
/// never a panic or a large allocation.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// Reads `bytes` from their start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self(bytes)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("it ends too early".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    /// A `u8`.
    pub fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    /// A length, or an enum's index.
    pub fn u32(&mut self) -> Result<usize, String> {
        let bytes: [u8; 4] = self.take(4)?.try_into().unwrap_or_default();
        Ok(u32::from_le_bytes(bytes) as usize)
    }

    /// The eight bytes of a `u64` or an `f64`.
    pub fn eight(&mut self) -> Result<[u8; 8], String> {
        Ok(self.take(8)?.try_into().unwrap_or_default())
    }

    /// A `list<u8>`'s bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()?;
        self.take(len)
    }

    /// A `string`'s text.
    pub fn str(&mut self) -> Result<&'a str, String> {
        core::str::from_utf8(self.bytes()?).map_err(|_| "a string is not UTF-8".into())
    }

    /// A bool, or an option's tag.
    pub fn flag(&mut self) -> Result<bool, String> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a bool or an option's tag is neither 0 nor 1".into()),
        }
    }

    /// How many items a list has: at most one a byte left (every item of
    /// Braid's types takes one or more), so a length cannot reserve more
    /// than the bytes hold.
    pub fn count(&mut self) -> Result<usize, String> {
        let count = self.u32()?;
        if count > self.0.len() {
            return Err("a list is longer than the bytes that follow".into());
        }
        Ok(count)
    }

    /// Nothing is left.
    pub fn done(&self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes follow the value", self.0.len()))
        }
    }
}

/// The value of shape `shape` that `bytes` hold (all of them) as JSON
/// text: bytes as base64, record keys in lowerCamelCase in the record's
/// order.
pub fn to_json_text(bytes: &[u8], shape: &Shape) -> Result<String, String> {
    let mut reader = Reader(bytes);
    let mut out = String::new();
    write_json(&mut reader, shape, &mut out)?;
    reader.done()?;
    Ok(out)
}

fn write_json(r: &mut Reader, shape: &Shape, out: &mut String) -> Result<(), String> {
    match shape {
        Shape::Bool => out.push_str(if r.flag()? { "true" } else { "false" }),
        Shape::U8 => write!(out, "{}", r.byte()?).unwrap_or_default(),
        Shape::U64 => write!(out, "{}", u64::from_le_bytes(r.eight()?)).unwrap_or_default(),
        Shape::F64 => write_json_float(f64::from_le_bytes(r.eight()?), out),
        Shape::String => write_json_string(r.str()?, out),
        Shape::Bytes => write_bytes_json(r.bytes()?, out),
        Shape::List(item) => {
            out.push('[');
            for i in 0..r.count()? {
                if i > 0 {
                    out.push(',');
                }
                write_json(r, item, out)?;
            }
            out.push(']');
        }
        Shape::Tuple(members) => {
            out.push('[');
            for (i, shape) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(r, shape, out)?;
            }
            out.push(']');
        }
        Shape::Option(inner) => match r.flag()? {
            false => out.push_str("null"),
            true => write_json(r, inner, out)?,
        },
        Shape::Record(fields) => {
            out.push('{');
            for (i, (name, shape)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(&camel(name), out);
                out.push(':');
                write_json(r, shape, out)?;
            }
            out.push('}');
        }
        Shape::Enum(cases) => {
            let index = r.u32()?;
            let name = cases.get(index).ok_or("an enum's case is out of range")?;
            write_json_string(&camel(name), out);
        }
    }
    Ok(())
}

/// Bytes given in JSON: a base64 string.
pub fn json_bytes(json: &Json, place: &str) -> Result<Vec<u8>, String> {
    match json {
        Json::String(s) => BASE64.decode(s.as_bytes()).map_err(|e| format!("{place}: not base64 ({e})")),
        _ => Err(format!("{place}: expected bytes as a base64 string, found {}", kind(json))),
    }
}

/// Bytes as JSON: base64, except that an empty `list<u8>` is `[]` (as the
/// dynamic API's value it cannot be told from an empty list of anything
/// else).
pub fn bytes_json(bytes: &[u8]) -> Json {
    if bytes.is_empty() {
        Json::Array(Vec::new())
    } else {
        Json::String(BASE64.encode(bytes))
    }
}

/// Appends [`bytes_json`]'s JSON as text.
pub fn write_bytes_json(bytes: &[u8], out: &mut String) {
    if bytes.is_empty() {
        out.push_str("[]");
    } else {
        out.push('"');
        out.push_str(&BASE64.encode(bytes));
        out.push('"');
    }
}

/// What kind of JSON value `json` is, as an error names it.
pub fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// At most 64 characters of `text`, for an error that shows it.
pub fn truncate(text: &str) -> String {
    text.chars().take(64).collect()
}
