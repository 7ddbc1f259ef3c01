//! The host's side of `run-packed`: a component's types as the wire's
//! [`Shape`]s, through which a run's inputs are written from JSON straight
//! into Braid's packed encoding and its output read back as JSON text
//! ([`braid_schema::wire`], the one definition every host shares), so
//! that no value of the dynamic API (40 bytes a byte of a `list<u8>`) is
//! ever made; and [`to_val`], for components built before `run-packed`
//! existed.

use braid_schema::wire::{Reader, Shape};
use wasmtime::component::{Type, Val};

use crate::values::is_bytes;

/// The wire's shape of a component's type, or why Braid's components
/// have no such type.
pub(crate) fn shape_of(ty: &Type) -> Result<Shape, String> {
    Ok(match ty {
        Type::Bool => Shape::Bool,
        Type::U8 => Shape::U8,
        Type::U64 => Shape::U64,
        Type::Float64 => Shape::F64,
        Type::String => Shape::String,
        ty if is_bytes(ty) => Shape::Bytes,
        Type::List(list) => Shape::List(Box::new(shape_of(&list.ty())?)),
        Type::Tuple(tuple) => Shape::Tuple(tuple.types().map(|ty| shape_of(&ty)).collect::<Result<_, _>>()?),
        Type::Option(option) => Shape::Option(Box::new(shape_of(&option.ty())?)),
        Type::Record(record) => Shape::Record(
            record.fields().map(|f| Ok((f.name.to_string(), shape_of(&f.ty)?))).collect::<Result<_, String>>()?,
        ),
        Type::Enum(cases) => Shape::Enum(cases.names().map(str::to_string).collect()),
        other => return Err(format!("Braid's components take and give no {other:?}")),
    })
}

/// The value of type `ty` that `bytes` hold, as the dynamic API's value:
/// for a component without `run-packed` (built by an earlier Braid).
pub(crate) fn to_val(bytes: &[u8], ty: &Type) -> Result<Val, String> {
    let mut reader = Reader::new(bytes);
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
    use braid_schema::wire;
    use serde_json::{json, Value as Json};

    use super::*;
    use crate::testing::types;
    use crate::values;

    /// The JSON text of the value of type `ty` that `bytes` hold.
    fn to_json_text(bytes: &[u8], ty: &Type) -> Result<String, String> {
        wire::to_json_text(bytes, &shape_of(ty)?)
    }

    fn record() -> Type {
        types(r#"(param "x" $r)"#).remove(0)
    }

    fn packed(json: &Json, ty: &Type) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        wire::put_json(json, &shape_of(ty)?, "input x", &mut out)?;
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
        assert_eq!(with("data", json!("AB!C")), "input x.data: not base64 (invalid symbol at 2)");
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
