//! Operation config: a resolved set of values ([`Config`]) in which every
//! declared key has a value (the first allowed value by default). The
//! declarations themselves ([`ConfigKey`]) and the cargo features that gate
//! values ([`value_feature`]) belong to the schema (`braid-schema`) and are
//! re-exported here. A value whose feature is off fails with
//! [`Error::NotCompiledIn`].

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::Error;

pub use braid_schema::{value_feature, ConfigKey};

/// A resolved config: every declared key maps to an allowed value.
///
/// Generated workflows build theirs from static pairs ([`Config::from_static`]),
/// which allocates nothing; configs resolved at run time own their strings.
#[derive(Debug, Clone)]
pub struct Config {
    entries: Entries,
}

/// Pairs sorted by key.
#[derive(Debug, Clone)]
enum Entries {
    Static(&'static [(&'static str, &'static str)]),
    Owned(Vec<(String, String)>),
}

impl Default for Config {
    fn default() -> Self {
        Self { entries: Entries::Static(&[]) }
    }
}

impl PartialEq for Config {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Config {}

impl Config {
    /// An empty config (for operations that declare no keys).
    pub fn new() -> Self {
        Self::default()
    }

    /// Resolves `given` against the keys `operation` declares: unknown keys
    /// and values outside the allowed set are errors; missing keys take
    /// their default.
    pub fn resolve<'a, I>(operation: &str, keys: &[ConfigKey], given: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut entries = BTreeMap::new();
        for (key, value) in given {
            let Some(decl) = keys.iter().find(|k| k.name == key) else {
                return Err(Error::UnknownConfigKey {
                    operation: operation.into(),
                    key: key.into(),
                    expected: join(keys.iter().map(|k| k.name)),
                });
            };
            if !decl.allowed.contains(&value) {
                return Err(Error::InvalidConfigValue {
                    operation: operation.into(),
                    key: key.into(),
                    found: value.into(),
                    expected: join(decl.allowed.iter().copied()),
                });
            }
            entries.insert(String::from(key), String::from(value));
        }
        for decl in keys {
            if let Some(default) = decl.allowed.first() {
                entries.entry(decl.name.into()).or_insert_with(|| String::from(*default));
            }
        }
        Ok(Self { entries: Entries::Owned(entries.into_iter().collect()) })
    }

    /// A config from static pairs already checked against the operation's
    /// keys and sorted by key (generated workflows: the generator validated
    /// them). Allocates nothing.
    pub const fn from_static(pairs: &'static [(&'static str, &'static str)]) -> Self {
        Self { entries: Entries::Static(pairs) }
    }

    /// A config from checked pairs (any order; a later pair replaces an
    /// earlier one with the same key).
    pub fn from_checked(pairs: &[(&str, &str)]) -> Self {
        let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (String::from(*k), String::from(*v))).collect();
        Self { entries: Entries::Owned(map.into_iter().collect()) }
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// All entries, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let fixed: &[(&str, &str)] = match &self.entries {
            Entries::Static(pairs) => pairs,
            Entries::Owned(_) => &[],
        };
        let owned: &[(String, String)] = match &self.entries {
            Entries::Static(_) => &[],
            Entries::Owned(pairs) => pairs,
        };
        fixed.iter().copied().chain(owned.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
}

pub(crate) fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    if items.is_empty() {
        String::from("(none: this operation takes no config)")
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    const KEYS: &[ConfigKey] = &[ConfigKey { name: "hasher", allowed: &["blake3", "sha2-256"] }];

    #[test]
    fn missing_keys_take_the_first_allowed_value() {
        let c = Config::resolve("op", KEYS, []).unwrap();
        assert_eq!(c.get("hasher"), Some("blake3"));
        let c = Config::resolve("op", KEYS, [("hasher", "sha2-256")]).unwrap();
        assert_eq!(c.get("hasher"), Some("sha2-256"));
    }

    #[test]
    fn static_and_resolved_configs_agree() {
        let fixed = Config::from_static(&[("hasher", "sha2-256")]);
        let resolved = Config::resolve("op", KEYS, [("hasher", "sha2-256")]).unwrap();
        assert_eq!(fixed, resolved);
        assert_eq!(fixed.get("hasher"), Some("sha2-256"));
        assert_eq!(fixed.get("nope"), None);
        assert_eq!(
            Config::from_checked(&[("b", "1"), ("a", "2"), ("b", "3")]).iter().collect::<Vec<_>>(),
            [("a", "2"), ("b", "3")]
        );
    }

    #[test]
    fn unknown_keys_and_values_are_rejected() {
        let e = Config::resolve("op", KEYS, [("hash", "blake3")]).unwrap_err();
        assert_eq!(e.to_string(), "op: unknown config key `hash`; expected one of: hasher");
        let e = Config::resolve("op", KEYS, [("hasher", "md5")]).unwrap_err();
        assert_eq!(e.to_string(), "op: config `hasher` cannot be `md5`; expected one of: blake3, sha2-256");
        let e = Config::resolve("op", &[], [("x", "y")]).unwrap_err();
        assert!(e.to_string().contains("this operation takes no config"), "{e}");
    }
}
