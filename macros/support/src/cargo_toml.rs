//! The package a standalone `Cargo.toml` text declares, read as cargo gives
//! it to the compiler (`CARGO_PKG_*`): `name` required, `version` `0.0.0`
//! when absent (cargo ≥ 1.75), `description`, `repository` and `license`
//! empty when absent. Every problem is an error at its place in the file.

use std::collections::BTreeMap;

use serde::{de::IgnoredAny, Deserialize};
use toml::Spanned;

use crate::crate_info::Package;
use crate::error::{DeriveError, Location};

const FILE: &str = "Cargo.toml";

#[derive(Deserialize)]
struct Manifest {
    // Keys carry the spans: toml gives none for a dotted key's table
    // (`edition.workspace = true`).
    package: Option<Spanned<BTreeMap<Spanned<String>, Value>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Value {
    String(String),
    Table(BTreeMap<String, IgnoredAny>),
    Other(IgnoredAny),
}

/// The `[package]` of `text`, or every problem with it.
pub fn read_package(text: &str) -> Result<Package, Vec<DeriveError>> {
    let at = |offset: usize| Location::of_offset(FILE, text, offset);
    let manifest: Manifest = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        vec![DeriveError::CargoToml { at: at(offset), message: format!("cannot parse Cargo.toml: {}", e.message()) }]
    })?;
    let Some(package) = manifest.package else {
        return Err(vec![DeriveError::CargoToml {
            at: at(0),
            message: "no `[package]` table; an operation crate declares `name` and `version` there".into(),
        }]);
    };
    let table_at = at(package.span().start);
    let fields = package.into_inner();
    let mut errors = Vec::new();
    // Inherited fields first, whether or not the manifest uses them.
    for (field, value) in &fields {
        if matches!(value, Value::Table(t) if t.contains_key("workspace")) {
            errors.push(DeriveError::Inherited { at: at(field.span().start), field: field.get_ref().clone() });
        }
    }
    let mut string = |field: &str, absent: Option<&str>| -> String {
        match fields.get_key_value(field) {
            Some((_, Value::String(s))) => s.clone(),
            // Reported above.
            Some((_, Value::Table(t))) if t.contains_key("workspace") => String::new(),
            Some((key, _)) => {
                errors.push(DeriveError::CargoToml {
                    at: at(key.span().start),
                    message: format!("`package.{field}` must be a string"),
                });
                String::new()
            }
            None => absent.map(String::from).unwrap_or_else(|| {
                errors.push(DeriveError::CargoToml {
                    at: table_at.clone(),
                    message: format!("`[package]` has no `{field}`; add `{field} = \"...\"`"),
                });
                String::new()
            }),
        }
    };
    let package = Package {
        name: string("name", None),
        version: string("version", Some("0.0.0")),
        description: string("description", Some("")),
        repository: string("repository", Some("")),
        license: string("license", Some("")),
    };
    if errors.is_empty() {
        Ok(package)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        read_package(text).unwrap_err().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn reads_what_cargo_passes() {
        let p = read_package("[package]\nname = \"op_x\"\nversion = \"1.2.3\"\nlicense = \"MIT\"\n").unwrap();
        assert_eq!(
            p,
            Package {
                name: "op_x".into(),
                version: "1.2.3".into(),
                description: String::new(),
                repository: String::new(),
                license: "MIT".into(),
            }
        );
        assert_eq!(read_package("[package]\nname = \"op_x\"\n").unwrap().version, "0.0.0");
    }

    #[test]
    fn names_each_inherited_field() {
        assert_eq!(
            errors("[package]\nname = \"op_x\"\nversion = \"0.1.0\"\nedition.workspace = true\nlicense = { workspace = true }\n"),
            [
                "Cargo.toml:4:1: `package.edition` is inherited from a workspace (`edition.workspace = true`); \
                 the Cargo.toml must be standalone: write the value itself",
                "Cargo.toml:5:1: `package.license` is inherited from a workspace (`license.workspace = true`); \
                 the Cargo.toml must be standalone: write the value itself",
            ]
        );
    }

    #[test]
    fn reports_unreadable_and_missing_fields() {
        let e = errors("[package]\nname = \"op_x\nversion = \"0.1.0\"\n");
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("Cargo.toml:2:"), "{e:?}");
        assert!(e[0].contains("cannot parse Cargo.toml"), "{e:?}");
        assert_eq!(
            errors("[dependencies]\n"),
            ["Cargo.toml:1:1: no `[package]` table; an operation crate declares `name` and `version` there"]
        );
        assert_eq!(
            errors("[features]\n\n[package]\nversion = \"0.1.0\"\ndescription = 3\n"),
            [
                "Cargo.toml:3:1: `[package]` has no `name`; add `name = \"...\"`",
                "Cargo.toml:5:1: `package.description` must be a string",
            ]
        );
    }
}
