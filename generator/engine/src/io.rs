//! A run's inputs and output in the forms they cross the boundary in:
//! bytes, text, or any other value in the packed encoding (inputs are
//! [`braid_schema::wire`]'s), and back as callers read them.

use braid_schema::wire::{self, Shape};
use wasmtime::component::{Type, Val};

use crate::packed;
use crate::values::{bytes_val, is_bytes, to_json_text, val_bytes};

pub use braid_schema::wire::Input;

/// An input as a value of the dynamic API, of type `ty` (for a component
/// without `run-packed`).
pub(crate) fn into_val(input: Input, ty: &Type) -> Result<Val, String> {
    match input {
        Input::Bytes(bytes) => Ok(bytes_val(bytes)),
        Input::Text(text) => Ok(Val::String(text)),
        Input::Packed(bytes) => packed::to_val(&bytes, ty),
    }
}

/// A run's output: the bytes of a `list<u8>`, the text of a `string`, or
/// any other value as JSON text (bytes in it as base64, record keys in
/// lowerCamelCase, in the record's order, as the npm packages write them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Bytes(Vec<u8>),
    Text(String),
    Json(String),
}

impl Output {
    /// The output of type `ty` that a value of the dynamic API gives.
    pub(crate) fn from_val(val: Val, ty: &Type) -> Self {
        match val {
            Val::String(text) => Self::Text(text),
            val if is_bytes(ty) => Self::Bytes(val_bytes(&val).unwrap_or_default()),
            val => Self::Json(to_json_text(&val)),
        }
    }

    /// The output of shape `shape` that `run-packed` gave, or what is
    /// wrong with it.
    pub(crate) fn from_packed(mut bytes: Vec<u8>, shape: &Shape) -> Result<Self, String> {
        match shape {
            Shape::Bytes | Shape::String => {
                let len = bytes.get(..4).map(|n| u32::from_le_bytes(n.try_into().unwrap_or_default()) as usize);
                if len != Some(bytes.len().saturating_sub(4)) {
                    return Err("its length is not the bytes that follow".into());
                }
                bytes.drain(..4);
                if *shape == Shape::Bytes {
                    Ok(Self::Bytes(bytes))
                } else {
                    String::from_utf8(bytes).map(Self::Text).map_err(|_| "a string is not UTF-8".into())
                }
            }
            shape => wire::to_json_text(&bytes, shape).map(Self::Json),
        }
    }

    /// Its bytes, if it is a `list<u8>`.
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Self::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// As JSON text (bytes as base64, text as a JSON string).
    pub fn into_json_text(self) -> String {
        match self {
            Self::Bytes(bytes) => {
                let mut out = String::new();
                wire::write_bytes_json(&bytes, &mut out);
                out
            }
            Self::Text(text) => {
                let mut out = String::new();
                braid_schema::write_json_string(&text, &mut out);
                out
            }
            Self::Json(text) => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::types;

    /// An output reads the same from `run-packed` as from the dynamic API.
    #[test]
    fn outputs_are_the_same_from_either_entry() {
        let [bytes_ty, string_ty] = [r#"(param "x" (list u8))"#, r#"(param "x" string)"#].map(|p| types(p).remove(0));
        for bytes in [vec![], vec![0, 1, 255], b"hello".to_vec()] {
            let mut out = Vec::new();
            wire::put_bytes(&bytes, &mut out).unwrap();
            let packed = Output::from_packed(out, &Shape::Bytes).unwrap();
            assert_eq!(packed, Output::from_val(bytes_val(bytes.clone()), &bytes_ty));
            assert_eq!(packed.into_bytes(), Some(bytes));
        }
        assert_eq!(Output::Bytes(b"hi".to_vec()).into_json_text(), "\"aGk=\"");
        assert_eq!(Output::Bytes(vec![]).into_json_text(), "[]");
        let text = Output::from_packed(b"\x03\0\0\0\"\xc3\xa9"[..].to_vec(), &Shape::String);
        assert_eq!(text, Ok(Output::Text("\"é".into())));
        assert_eq!(text.unwrap().into_json_text(), r#""\"é""#);
        assert_eq!(Output::from_val(Val::String("x".into()), &string_ty), Output::Text("x".into()));
        assert!(Output::from_packed(vec![5, 0, 0, 0, 1], &Shape::Bytes).is_err());
        assert!(Output::from_packed(vec![1, 0, 0, 0, 0xff], &Shape::String).is_err());
    }
}
