//! Canonical JSON, the form manifests are hashed in: object keys sorted by
//! their UTF-8 bytes, no whitespace, serde_json's string escaping. An
//! operation's version id is the blake3 CIDv1 of these bytes, so this form
//! must never change without new operation versions (and a new
//! [`crate::SCHEMA_VERSION`]).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

/// The canonical text of `value`.
pub fn canonical(value: &Value) -> String {
    sorted(value).to_string()
}

/// Objects are rebuilt in sorted key order, so the result does not depend
/// on whether serde_json's `preserve_order` feature is on in the build.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        let v = json!({"b": [1, 2], "a": {"d": "x", "c": "é\"\n"}});
        assert_eq!(canonical(&v), r#"{"a":{"c":"é\"\n","d":"x"},"b":[1,2]}"#);
    }
}
