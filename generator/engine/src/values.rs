//! The dynamic API's values of components built before `run-packed`, as
//! JSON the way [`braid_schema::wire`] writes every run's.

pub use braid_schema::camel;
use braid_schema::wire::write_bytes_json;
use braid_schema::{write_json_float, write_json_string};
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

/// A component's value as JSON text (bytes as base64, record keys in
/// lowerCamelCase and in the order the record declares them), written as
/// [`braid_schema::wire::to_json_text`] writes a packed value: the same
/// text, whichever way a component gives its output.
pub fn to_json_text(val: &Val) -> String {
    let mut out = String::new();
    write_json(val, &mut out);
    out
}

fn write_json(val: &Val, out: &mut String) {
    let list = |items: &[Val], out: &mut String| {
        out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json(item, out);
        }
        out.push(']');
    };
    match val {
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::U8(n) => out.push_str(&n.to_string()),
        Val::U64(n) => out.push_str(&n.to_string()),
        Val::Float64(n) => write_json_float(*n, out),
        Val::String(s) => write_json_string(s, out),
        Val::List(items) if !items.is_empty() && items.iter().all(|v| matches!(v, Val::U8(_))) => {
            write_bytes_json(&val_bytes(val).unwrap_or_default(), out)
        }
        Val::List(items) | Val::Tuple(items) => list(items, out),
        Val::Record(fields) => {
            out.push('{');
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(&camel(name), out);
                out.push(':');
                write_json(value, out);
            }
            out.push('}');
        }
        Val::Enum(name) => write_json_string(&camel(name), out),
        Val::Option(inner) => match inner.as_deref() {
            Some(inner) => write_json(inner, out),
            None => out.push_str("null"),
        },
        other => write_json_string(&format!("{other:?}"), out),
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
