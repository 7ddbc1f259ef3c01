//! The host's side of `run-packed`: a run's inputs written from JSON
//! straight into Braid's packed encoding, and its output read back from it
//! as JSON text, both guided by the types `run` declares, so that no value
//! of the dynamic API (40 bytes a byte of a `list<u8>`) is ever made. The
//! encoding is the guest's `braid_support::component::Packed`: little-endian;
//! `bool` and `u8` a byte, `u64` and `f64` eight; a `string` or `list` its
//! length (`u32`: bytes, or items) then its contents; an `option` a byte
//! (0 or 1) then its value; a `tuple` or `record` its members in order; an
//! `enum` its case's index (`u32`).
//!
//! JSON is read and written as [`crate::values`] reads and writes the
//! dynamic API's values (the same messages, the same output), so a run
//! answers the same whichever entry a component has. [`to_val`] is for
//! components built before `run-packed` existed.

use std::fmt::Write as _;

use serde_json::Value as Json;
use wasmtime::component::{Type, Val};

use crate::values::{bytes_json, camel, float_json, is_bytes, json_bytes, kind, truncate};

/// Appends a length, or an enum's index.
pub(crate) fn put_len(n: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let n = u32::try_from(n).map_err(|_| format!("{n} is over the 4 GiB a component's value can hold"))?;
    out.extend_from_slice(&n.to_le_bytes());
    Ok(())
}

/// Appends bytes (a `list<u8>`, or a string's UTF-8).
pub(crate) fn put_bytes(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    put_len(bytes.len(), out)?;
    out.extend_from_slice(bytes);
    Ok(())
}

/// Appends `json` as a value of type `ty`, or says what is wrong with it
/// at `place` (as [`crate::values::from_json`] would).
pub(crate) fn put_json(json: &Json, ty: &Type, place: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let wrong = |expected: &str| Err(format!("{place}: expected {expected}, found {}", kind(json)));
    match ty {
        Type::Bool => match json {
            Json::Bool(b) => out.push(u8::from(*b)),
            _ => return wrong("a boolean"),
        },
        Type::U8 => match json.as_u64().and_then(|n| u8::try_from(n).ok()) {
            Some(n) => out.push(n),
            None => return wrong("an integer in 0..=255"),
        },
        Type::U64 => match json {
            Json::Number(n) if n.as_u64().is_some() => {
                out.extend_from_slice(&n.as_u64().unwrap_or_default().to_le_bytes())
            }
            Json::String(s) if s.parse::<u64>().is_ok() => {
                out.extend_from_slice(&s.parse::<u64>().unwrap_or_default().to_le_bytes())
            }
            _ => return wrong("an integer in 0..2^64 (a number, or a string of digits)"),
        },
        Type::Float64 => match json.as_f64() {
            Some(n) => out.extend_from_slice(&n.to_le_bytes()),
            None => return wrong("a number"),
        },
        Type::String => match json {
            Json::String(s) => put_bytes(s.as_bytes(), out)?,
            _ => return wrong("a string"),
        },
        ty if is_bytes(ty) => put_bytes(&json_bytes(json, place)?, out)?,
        Type::List(list) => match json {
            Json::Array(items) => {
                put_len(items.len(), out)?;
                for (i, item) in items.iter().enumerate() {
                    put_json(item, &list.ty(), &format!("{place}[{i}]"), out)?;
                }
            }
            _ => return wrong("an array"),
        },
        Type::Tuple(tuple) => match json {
            Json::Array(items) if items.len() == tuple.types().len() => {
                for (i, (item, ty)) in items.iter().zip(tuple.types()).enumerate() {
                    put_json(item, &ty, &format!("{place}[{i}]"), out)?;
                }
            }
            _ => return wrong(&format!("an array of {}", tuple.types().len())),
        },
        Type::Option(option) => match json {
            Json::Null => out.push(0),
            other => {
                out.push(1);
                put_json(other, &option.ty(), place, out)?;
            }
        },
        Type::Record(record) => {
            let Json::Object(object) = json else { return wrong("an object") };
            for field in record.fields() {
                let key = camel(field.name);
                match (object.get(&key), &field.ty) {
                    (Some(value), ty) => put_json(value, ty, &format!("{place}.{key}"), out)?,
                    (None, Type::Option(_)) => out.push(0),
                    (None, _) => return Err(format!("{place}: the key `{key}` is missing")),
                }
            }
            if let Some(extra) = object.keys().find(|k| !record.fields().any(|f| camel(f.name) == **k)) {
                return Err(format!("{place}: unknown key `{}`", truncate(extra)));
            }
        }
        Type::Enum(cases) => match json {
            Json::String(s) => match cases.names().position(|name| camel(name) == *s) {
                Some(index) => put_len(index, out)?,
                None => {
                    let names: Vec<String> = cases.names().map(|n| format!("\"{}\"", camel(n))).collect();
                    return Err(format!("{place}: `{}` is not one of {}", truncate(s), names.join(", ")));
                }
            },
            _ => return wrong("a string"),
        },
        other => return Err(format!("{place}: Braid's components take no {other:?}")),
    }
    Ok(())
}

/// Packed bytes being read; every read checks that they are there, so a
/// malformed output (from a hostile or broken component) is an error.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("it ends too early".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<usize, String> {
        let bytes: [u8; 4] = self.take(4)?.try_into().unwrap_or_default();
        Ok(u32::from_le_bytes(bytes) as usize)
    }

    fn eight(&mut self) -> Result<[u8; 8], String> {
        Ok(self.take(8)?.try_into().unwrap_or_default())
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()?;
        self.take(len)
    }

    fn str(&mut self) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "a string is not UTF-8".into())
    }

    fn flag(&mut self) -> Result<bool, String> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a bool or an option's tag is neither 0 nor 1".into()),
        }
    }

    /// How many items a list has: at most one a byte left (every item of
    /// Braid's types takes one or more), so a length cannot reserve more
    /// than the bytes hold.
    fn count(&mut self) -> Result<usize, String> {
        let count = self.u32()?;
        if count > self.0.len() {
            return Err("a list is longer than the bytes that follow".into());
        }
        Ok(count)
    }

    fn done(&self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes follow the value", self.0.len()))
        }
    }
}

/// The value of type `ty` that `bytes` hold (all of them) as JSON text:
/// bytes as base64, record keys in lowerCamelCase in the record's order,
/// as [`crate::values::to_json_text`] writes the same value.
pub(crate) fn to_json_text(bytes: &[u8], ty: &Type) -> Result<String, String> {
    let mut reader = Reader(bytes);
    let mut out = String::new();
    write_json(&mut reader, ty, &mut out)?;
    reader.done()?;
    Ok(out)
}

fn write_json(r: &mut Reader, ty: &Type, out: &mut String) -> Result<(), String> {
    match ty {
        Type::Bool => out.push_str(if r.flag()? { "true" } else { "false" }),
        Type::U8 => write!(out, "{}", r.byte()?).unwrap_or_default(),
        Type::U64 => write!(out, "{}", u64::from_le_bytes(r.eight()?)).unwrap_or_default(),
        Type::Float64 => out.push_str(&float_json(f64::from_le_bytes(r.eight()?)).to_string()),
        Type::String => out.push_str(&Json::String(r.str()?.to_string()).to_string()),
        ty if is_bytes(ty) => out.push_str(&bytes_json(r.bytes()?).to_string()),
        Type::List(list) => {
            out.push('[');
            for i in 0..r.count()? {
                if i > 0 {
                    out.push(',');
                }
                write_json(r, &list.ty(), out)?;
            }
            out.push(']');
        }
        Type::Tuple(tuple) => {
            out.push('[');
            for (i, ty) in tuple.types().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(r, &ty, out)?;
            }
            out.push(']');
        }
        Type::Option(option) => match r.flag()? {
            false => out.push_str("null"),
            true => write_json(r, &option.ty(), out)?,
        },
        Type::Record(record) => {
            out.push('{');
            for (i, field) in record.fields().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Json::String(camel(field.name)).to_string());
                out.push(':');
                write_json(r, &field.ty, out)?;
            }
            out.push('}');
        }
        Type::Enum(cases) => {
            let index = r.u32()?;
            let name = cases.names().nth(index).ok_or("an enum's case is out of range")?;
            out.push_str(&Json::String(camel(name)).to_string());
        }
        other => return Err(format!("Braid's components give no {other:?}")),
    }
    Ok(())
}

/// The value of type `ty` that `bytes` hold, as the dynamic API's value:
/// for a component without `run-packed` (built by an earlier Braid).
pub(crate) fn to_val(bytes: &[u8], ty: &Type) -> Result<Val, String> {
    let mut reader = Reader(bytes);
    let val = read_val(&mut reader, ty)?;
    reader.done()?;
    Ok(val)
}

fn read_val(r: &mut Reader, ty: &Type) -> Result<Val, String> {
    Ok(match ty {
        Type::Bool => Val::Bool(r.flag()?),
        Type::U8 => Val::U8(r.byte()?),
        Type::U64 => Val::U64(u64::from_le_bytes(r.eight()?)),
        Type::Float64 => Val::Float64(f64::from_le_bytes(r.eight()?)),
        Type::String => Val::String(r.str()?.to_string()),
        Type::List(list) => {
            let count = r.count()?;
            Val::List((0..count).map(|_| read_val(r, &list.ty())).collect::<Result<_, _>>()?)
        }
        Type::Tuple(tuple) => Val::Tuple(tuple.types().map(|ty| read_val(r, &ty)).collect::<Result<_, _>>()?),
        Type::Option(option) => match r.flag()? {
            false => Val::Option(None),
            true => Val::Option(Some(Box::new(read_val(r, &option.ty())?))),
        },
        Type::Record(record) => Val::Record(
            record.fields().map(|f| Ok((f.name.to_string(), read_val(r, &f.ty)?))).collect::<Result<_, String>>()?,
        ),
        Type::Enum(cases) => {
            let index = r.u32()?;
            Val::Enum(cases.names().nth(index).ok_or("an enum's case is out of range")?.to_string())
        }
        other => return Err(format!("Braid's components take no {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::types;
    use crate::values;

    fn record() -> Type {
        types(r#"(param "x" $r)"#).remove(0)
    }

    fn packed(json: &Json, ty: &Type) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        put_json(json, ty, "input x", &mut out)?;
        Ok(out)
    }

    fn example() -> Json {
        json!({
            "fileCid": "bafy\"x\u{e9}",
            "data": "AAEC/w==",
            "n": "18446744073709551615",
            "f": 0.5,
            "o": true,
            "e": "aB",
            "m": [["k", 7]],
            "l": ["c", "aB"]
        })
    }

    /// What JSON gives, packed and read back, is the JSON text the dynamic
    /// API's value writes (and the npm packages): key order, base64, a
    /// u64 as a number, camelCase cases.
    #[test]
    fn packed_values_read_back_as_the_dynamic_apis_json() {
        let ty = record();
        let bytes = packed(&example(), &ty).unwrap();
        let text = to_json_text(&bytes, &ty).unwrap();
        assert_eq!(
            text,
            r#"{"fileCid":"bafy\"xé","data":"AAEC/w==","n":18446744073709551615,"f":0.5,"o":true,"e":"aB","m":[["k",7]],"l":["c","aB"]}"#
        );
        assert_eq!(values::to_json_text(&to_val(&bytes, &ty).unwrap()), text);
        // An absent option is `null`; a whole float has no fraction.
        let mut sparse = example();
        sparse.as_object_mut().unwrap().remove("o");
        sparse["f"] = json!(3.0);
        let text = to_json_text(&packed(&sparse, &ty).unwrap(), &ty).unwrap();
        assert!(text.contains(r#""f":3,"o":null,"#), "{text}");
    }

    #[test]
    fn wrong_inputs_say_where_and_what_was_expected() {
        let ty = record();
        let with = |key: &str, value: Json| {
            let mut json = example();
            json[key] = value;
            packed(&json, &ty).unwrap_err()
        };
        assert_eq!(
            with("n", json!(-1)),
            "input x.n: expected an integer in 0..2^64 (a number, or a string of digits), found a number"
        );
        assert_eq!(with("data", json!("!")), "input x.data: not base64 (Invalid symbol 33, offset 0.)");
        assert_eq!(with("e", json!("A-b")), r#"input x.e: `A-b` is not one of "aB", "c""#);
        assert_eq!(with("m", json!([["k", 256]])), "input x.m[0][1]: expected an integer in 0..=255, found a number");
        assert_eq!(with("zzz", json!(1)), "input x: unknown key `zzz`");
        let mut missing = example();
        missing.as_object_mut().unwrap().remove("fileCid");
        assert_eq!(packed(&missing, &ty).unwrap_err(), "input x: the key `fileCid` is missing");
        assert_eq!(packed(&json!([]), &ty).unwrap_err(), "input x: expected an object, found an array");
    }

    /// A malformed output (a hostile or broken component's) is an error:
    /// cut short, a list longer than its bytes (nothing is reserved for
    /// it), bytes after the value, a case or a tag out of range.
    #[test]
    fn malformed_packed_bytes_are_refused_without_allocating() {
        let ty = record();
        let good = packed(&example(), &ty).unwrap();
        for cut in 0..good.len() {
            assert!(to_json_text(&good[..cut], &ty).is_err(), "cut at {cut}");
            assert!(to_val(&good[..cut], &ty).is_err(), "cut at {cut}");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(to_json_text(&trailing, &ty).unwrap_err(), "1 bytes follow the value");
        let list = types(r#"(param "x" (list $r))"#).remove(0);
        assert_eq!(
            to_json_text(&u32::MAX.to_le_bytes(), &list).unwrap_err(),
            "a list is longer than the bytes that follow"
        );
        let e = types(r#"(param "x" $e)"#).remove(0);
        assert_eq!(to_json_text(&2u32.to_le_bytes(), &e).unwrap_err(), "an enum's case is out of range");
        let option = types(r#"(param "x" (option u8))"#).remove(0);
        assert!(to_json_text(&[2, 0], &option).is_err());
        assert_eq!(to_json_text(&[1, 9], &option).unwrap(), "9");
    }
}
