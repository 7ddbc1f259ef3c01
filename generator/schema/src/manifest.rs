//! The operation manifest, typed, and every rule
//! a manifest must follow. The macro builds one from the code and reports
//! each [`Problem`] on the tokens its [`Field`] came from; the compiler
//! parses committed and registered manifests and reports the same problems.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::config::{self, value_feature};
use crate::text::{is_text, truncate};
use crate::{Platform, TypeDef, TypeName};

/// The group of operations taking a variable number of inputs.
pub const FLOWCONTROL: &str = "FLOWCONTROL";

/// What a registered crate is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "lowercase"))]
pub enum Kind {
    /// An operation: one `#[operation]` fn, a workflow step.
    #[default]
    Operation,
    /// A crate of value types only (`#[derive(Value)]`), without an
    /// operation: operations in other crates depend on it to share its
    /// types. Never a step. Its Cargo.toml says
    /// `[package.metadata.braid] kind = "types"`.
    Types,
}

impl Kind {
    /// Whether it is [`Kind::Operation`] (the kind a manifest leaves out).
    pub fn is_operation(&self) -> bool {
        *self == Kind::Operation
    }
}

/// An operation manifest (or a types-only crate's, [`Kind::Types`]). In
/// JSON every field of an operation is required and unknown fields are
/// refused; a types-only crate's has `"kind": "types"`, neither `inputs`
/// nor `output`, and an empty `config`. [`OperationManifest::canonical_json`] is the
/// form that is hashed into the version id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct OperationManifest {
    /// The crate name, e.g. `op_multihash`.
    pub name: String,
    /// An operation, or a crate of value types only. Left out for an
    /// operation.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Kind::is_operation"))]
    pub kind: Kind,
    /// The crate version (semver).
    pub version: String,
    /// What the operation does.
    pub description: String,
    /// Input types; the one element type `T` of a flow-control operation.
    /// Empty (and left out) for a types-only crate.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub inputs: Vec<TypeName>,
    /// The inputs' names, one per input (the operation's parameter names),
    /// for `braid ops`, diagnostics and editors' ports. Left out when
    /// empty: a manifest from before names has none.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub input_names: Vec<String>,
    /// The output type; `None` (and left out) for a types-only crate.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub output: Option<TypeName>,
    /// Whether the output is borrowed from an input (`-> Result<&'a T,
    /// Error>`: a view into it, such as an image's pixels). The next step
    /// of a segment takes it as it is, without a copy; a segment ending
    /// with it clones it. Left out when false.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub borrows: bool,
    /// Whether the operation also has an incremental form (`start`,
    /// `update` with each chunk of its one `Bytes` input, `finish`), so a
    /// workflow starting with it can take its input in chunks. Left out
    /// when false.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub stream: bool,
    /// Config keys with their allowed values, default first.
    pub config: BTreeMap<String, Vec<String>>,
    /// Groups such as `SYS` and [`FLOWCONTROL`].
    pub groups: Vec<String>,
    /// The crate's cargo features (without `default`).
    pub features: Vec<String>,
    /// Where the operation runs.
    pub targets: Vec<Platform>,
    /// The crate's repository URL (may be empty).
    pub repository: String,
    /// The crate's license expression (may be empty).
    pub license: String,
    /// The content id of the crate's source archive, so that the version id
    /// pins the code and not only the manifest. The macro cannot know it
    /// (the archive holds the code the macro expands) and leaves it out;
    /// the registry sets it when it stores the crate.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub source: Option<String>,
    /// The value types this crate defines (`#[derive(Value)]`), by their
    /// own name (`Image`); elsewhere they are named with the crate's,
    /// `op_image::Image`. Left out when there are none.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "BTreeMap::is_empty"))]
    pub types: BTreeMap<String, TypeDef>,
}

/// Where in a manifest a [`Problem`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// `name`.
    Name,
    /// `kind`: what a types-only crate has or lacks.
    Kind,
    /// `version`.
    Version,
    /// `description`.
    Description,
    /// `inputs` as a whole.
    Inputs,
    /// `inputs[i]`.
    Input(usize),
    /// `output`.
    Output,
    /// The config key itself.
    ConfigKey(String),
    /// `config[key][i]`.
    ConfigValue(String, usize),
    /// `groups[i]`.
    Group(usize),
    /// `features[i]`.
    Feature(usize),
    /// `targets[i]`.
    Target(usize),
    /// `source`.
    Source,
    /// `types[name]`.
    Type(String),
}

/// A rule a manifest breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The name is not a crate name.
    #[error("name `{found}` is not a crate name: an ASCII letter, then ASCII letters, digits, `_` or `-`, at most 64")]
    Name {
        /// The name (shortened).
        found: String,
    },
    /// The version is not semver.
    #[error("version `{found}` is not a semver version such as 0.1.0")]
    Version {
        /// The version (shortened).
        found: String,
    },
    /// The description is empty or has control characters.
    #[error("the description must be non-empty text without control characters other than newline and tab")]
    Description,
    /// No inputs.
    #[error("an operation takes at least one input")]
    NoInputs,
    /// Input names that are not one identifier per input.
    #[error("input names must be one lower-case identifier per input (at most 64 characters), not {found}")]
    InputNames {
        /// The names, as written (shortened).
        found: String,
    },
    /// No output.
    #[error("an operation has an output type")]
    NoOutput,
    /// A types-only crate with what only an operation has.
    #[error(
        "a crate of value types only (kind \"types\") has no {what}; an operation is a crate of its own that depends on it"
    )]
    NotAnOperation {
        /// `inputs`, `output`, `borrowed output`, `incremental form` or `config`.
        what: &'static str,
    },
    /// An incremental form on an operation that does not take one `Bytes`.
    #[error("an operation with an incremental form (`stream`) takes one Bytes input (fed in chunks), not {inputs}")]
    StreamInputs {
        /// Its inputs, as written.
        inputs: String,
    },
    /// An incremental form on an operation whose output is borrowed.
    #[error("an operation with an incremental form (`stream`) returns its output owned, not borrowed (`&'a T`)")]
    StreamBorrows,
    /// A types-only crate that defines none.
    #[error("a crate of value types only (kind \"types\") defines at least one (`#[derive(braid_macros::Value)]`)")]
    NoTypes,
    /// A generic input of an operation that is not flow control.
    #[error("input {index} `{input}` is generic, but only {FLOWCONTROL} operations take generic inputs")]
    GenericInput {
        /// Its position.
        index: usize,
        /// The type.
        input: TypeName,
    },
    /// A flow-control operation with other than one input type.
    #[error("a {FLOWCONTROL} operation declares exactly one input type (the type of each of its inputs), not {found}")]
    FlowControlInputs {
        /// How many it declares.
        found: usize,
    },
    /// The output has a type parameter no input binds.
    #[error("output `{output}` has a type parameter that no input has; is it a misspelt type?")]
    UnboundOutput {
        /// The output type.
        output: TypeName,
    },
    /// A config key that is not an identifier.
    #[error("config key `{}` is not an identifier such as `hasher`", truncate(key, 64))]
    ConfigKey {
        /// The key as written (shortened only when shown), so that it names
        /// its [`Field`].
        key: String,
    },
    /// A config key without values.
    #[error("config `{key}` needs at least one allowed value; the first is the default")]
    NoConfigValues {
        /// The key.
        key: String,
    },
    /// A config value that is empty or has control characters.
    #[error("config `{key}`: a value must be non-empty text without control characters")]
    ConfigValue {
        /// The key.
        key: String,
        /// The value's position.
        index: usize,
    },
    /// A config value listed twice.
    #[error("config `{key}` lists \"{value}\" twice")]
    DuplicateConfigValue {
        /// The key.
        key: String,
        /// The second occurrence.
        index: usize,
        /// The value.
        value: String,
    },
    /// Some but not all values of a key have their cargo feature.
    #[error(
        "config `{key}` gates values behind cargo features, but the crate declares no {}; \
         declare one feature per allowed value, or none",
        missing.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    )]
    ValueFeatures {
        /// The key.
        key: String,
        /// The position of the first value without its feature.
        first: usize,
        /// The features missing, in value order.
        missing: Vec<String>,
    },
    /// A group that is not an UPPER_CASE word.
    #[error("group \"{found}\" is not an UPPER_CASE word such as \"SYS\"")]
    Group {
        /// Its position.
        index: usize,
        /// The group (shortened).
        found: String,
    },
    /// A group listed twice.
    #[error("group \"{group}\" is listed twice")]
    DuplicateGroup {
        /// The second occurrence.
        index: usize,
        /// The group.
        group: String,
    },
    /// A feature listed twice.
    #[error("feature `{feature}` is listed twice")]
    DuplicateFeature {
        /// The second occurrence.
        index: usize,
        /// The feature.
        feature: String,
    },
    /// A target listed twice.
    #[error("target `{target}` is listed twice")]
    DuplicateTarget {
        /// The second occurrence.
        index: usize,
        /// The target.
        target: Platform,
    },
    /// A value type whose name or definition breaks the rules.
    #[error("value type `{}` {reason}", truncate(name, 64))]
    TypeDef {
        /// Its name as written (shortened only when shown).
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A value type of this crate that `types` does not define.
    #[error("`{ty}` is a value type of this crate, but `types` does not define `{name}`")]
    UndefinedType {
        /// Where it is named.
        field: Field,
        /// The type named.
        ty: TypeName,
        /// Its own name.
        name: String,
    },
    /// A source that is not a content id.
    #[error("source `{found}` is not a content id (CIDv1, raw, blake3, base32, such as bafkr4i...)")]
    Source {
        /// The source (shortened).
        found: String,
    },
}

impl Problem {
    /// The field the problem is about.
    pub fn field(&self) -> Field {
        match self {
            Problem::Name { .. } => Field::Name,
            Problem::Version { .. } => Field::Version,
            Problem::Description => Field::Description,
            Problem::NoInputs | Problem::FlowControlInputs { .. } | Problem::InputNames { .. } => Field::Inputs,
            Problem::NoOutput => Field::Output,
            Problem::StreamInputs { .. } => Field::Inputs,
            Problem::StreamBorrows => Field::Output,
            Problem::NotAnOperation { .. } | Problem::NoTypes => Field::Kind,
            Problem::GenericInput { index, .. } => Field::Input(*index),
            Problem::UnboundOutput { .. } => Field::Output,
            Problem::ConfigKey { key } | Problem::NoConfigValues { key } => Field::ConfigKey(key.clone()),
            Problem::ConfigValue { key, index } | Problem::DuplicateConfigValue { key, index, .. } => {
                Field::ConfigValue(key.clone(), *index)
            }
            Problem::ValueFeatures { key, first, .. } => Field::ConfigValue(key.clone(), *first),
            Problem::Group { index, .. } | Problem::DuplicateGroup { index, .. } => Field::Group(*index),
            Problem::DuplicateFeature { index, .. } => Field::Feature(*index),
            Problem::DuplicateTarget { index, .. } => Field::Target(*index),
            Problem::Source { .. } => Field::Source,
            Problem::TypeDef { name, .. } => Field::Type(name.clone()),
            Problem::UndefinedType { field, .. } => field.clone(),
        }
    }
}

/// A manifest that could not be read or breaks the rules.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Not JSON of the manifest's shape.
    #[cfg(feature = "json")]
    #[error("not a valid operation manifest: {0}")]
    Json(#[from] serde_json::Error),
    /// Every rule it breaks.
    #[error("operation manifest `{name}`: {}", Problems(problems))]
    Invalid {
        /// The manifest's name.
        name: String,
        /// At least one.
        problems: Vec<Problem>,
    },
}

/// Problems joined by `; `.
struct Problems<'a>(&'a [Problem]);

impl fmt::Display for Problems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl OperationManifest {
    /// Every rule the manifest breaks, in field order; empty when it is valid.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        if !is_crate_name(&self.name) {
            out.push(Problem::Name { found: truncate(&self.name, 64) });
        }
        if !is_semver(&self.version) {
            out.push(Problem::Version { found: truncate(&self.version, 64) });
        }
        if !is_text(&self.description, &['\n', '\t']) {
            out.push(Problem::Description);
        }
        self.check_types(&mut out);
        self.check_config(&mut out);
        for (index, group) in self.groups.iter().enumerate() {
            if !is_group(group) {
                out.push(Problem::Group { index, found: truncate(group, 64) });
            } else if self.groups[..index].contains(group) {
                out.push(Problem::DuplicateGroup { index, group: group.clone() });
            }
        }
        for (index, feature) in self.features.iter().enumerate() {
            if self.features[..index].contains(feature) {
                out.push(Problem::DuplicateFeature { index, feature: feature.clone() });
            }
        }
        for (index, target) in self.targets.iter().enumerate() {
            if self.targets[..index].contains(target) {
                out.push(Problem::DuplicateTarget { index, target: *target });
            }
        }
        if let Some(source) = &self.source {
            if !crate::content::is_content_id(source) {
                out.push(Problem::Source { found: truncate(source, 64) });
            }
        }
        out
    }

    /// What only an operation has, or what a types-only crate must.
    fn check_kind(&self, out: &mut Vec<Problem>) {
        match self.kind {
            Kind::Operation => {
                if self.inputs.is_empty() {
                    out.push(Problem::NoInputs);
                }
                if self.output.is_none() {
                    out.push(Problem::NoOutput);
                }
                if self.stream && (self.inputs != [TypeName::Bytes] || self.is_flow_control()) {
                    let inputs = self.inputs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                    out.push(Problem::StreamInputs { inputs: format!("({inputs})") });
                }
                if self.stream && self.borrows {
                    out.push(Problem::StreamBorrows);
                }
                let names = &self.input_names;
                let identifiers = names.iter().all(|n| crate::is_lower_identifier(n));
                if !names.is_empty() && (names.len() != self.inputs.len() || !identifiers) {
                    let found = names.iter().map(|n| truncate(n, 64)).collect::<Vec<_>>().join(", ");
                    out.push(Problem::InputNames { found: format!("({found}) for {} input(s)", self.inputs.len()) });
                }
            }
            Kind::Types => {
                let has = [
                    ("inputs", !self.inputs.is_empty() || !self.input_names.is_empty()),
                    ("output", self.output.is_some()),
                    ("borrowed output", self.borrows),
                    ("incremental form", self.stream),
                    ("config", !self.config.is_empty()),
                ];
                out.extend(has.into_iter().filter(|(_, has)| *has).map(|(what, _)| Problem::NotAnOperation { what }));
                if self.types.is_empty() {
                    out.push(Problem::NoTypes);
                }
            }
        }
    }

    fn check_types(&self, out: &mut Vec<Problem>) {
        self.check_kind(out);
        let flow = self.is_flow_control();
        if flow && !self.inputs.is_empty() && self.inputs.len() != 1 {
            out.push(Problem::FlowControlInputs { found: self.inputs.len() });
        }
        if !flow {
            for (index, input) in self.inputs.iter().enumerate().filter(|(_, t)| t.is_generic()) {
                out.push(Problem::GenericInput { index, input: input.clone() });
            }
        }
        if let Some(output) = self.output.as_ref().filter(|o| o.is_generic()) {
            if !self.inputs.iter().any(TypeName::is_generic) {
                out.push(Problem::UnboundOutput { output: output.clone() });
            }
        }
        for (name, def) in &self.types {
            let reason = if !crate::typename::is_type(name) {
                Some("is not a type name: an ASCII uppercase letter, then letters, digits or `_`, at most 64".into())
            } else {
                def.problem()
            };
            if let Some(reason) = reason {
                out.push(Problem::TypeDef { name: name.clone(), reason });
            }
        }
        // Every value type of this crate that is named must be defined.
        let own = crate::lib_name(&self.name);
        let mut named: Vec<(Field, TypeName)> = Vec::new();
        for (index, input) in self.inputs.iter().enumerate() {
            input.named(&mut |t| named.push((Field::Input(index), t.clone())));
        }
        if let Some(output) = &self.output {
            output.named(&mut |t| named.push((Field::Output, t.clone())));
        }
        for (name, def) in &self.types {
            if let TypeDef::Record(fields) = def {
                fields.iter().for_each(|f| f.ty.named(&mut |t| named.push((Field::Type(name.clone()), t.clone()))));
            }
        }
        named.dedup();
        for (field, ty) in named {
            if let TypeName::Named { krate, name } = &ty {
                if *krate == own && !self.types.contains_key(name) {
                    let name = name.clone();
                    out.push(Problem::UndefinedType { field, ty, name });
                }
            }
        }
    }

    fn check_config(&self, out: &mut Vec<Problem>) {
        for (key, values) in &self.config {
            if !config::is_key(key) {
                out.push(Problem::ConfigKey { key: key.clone() });
                continue;
            }
            if values.is_empty() {
                out.push(Problem::NoConfigValues { key: key.clone() });
            }
            for (index, value) in values.iter().enumerate() {
                if !config::is_value(value) {
                    out.push(Problem::ConfigValue { key: key.clone(), index });
                } else if values[..index].contains(value) {
                    out.push(Problem::DuplicateConfigValue { key: key.clone(), index, value: value.clone() });
                }
            }
            let gated = |v: &String| self.features.contains(&value_feature(key, v));
            let missing: Vec<(usize, String)> =
                values.iter().enumerate().filter(|(_, v)| !gated(v)).map(|(i, v)| (i, value_feature(key, v))).collect();
            if values.iter().any(gated) {
                if let Some(&(first, _)) = missing.first() {
                    let missing = missing.into_iter().map(|(_, f)| f).collect();
                    out.push(Problem::ValueFeatures { key: key.clone(), first, missing });
                }
            }
        }
    }

    /// `Ok` when [`Self::problems`] finds none.
    pub fn check(&self) -> Result<(), ManifestError> {
        let problems = self.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ManifestError::Invalid { name: truncate(&self.name, 64), problems })
        }
    }

    /// The name of input `index`, when the manifest names its inputs.
    pub fn input_name(&self, index: usize) -> Option<&str> {
        self.input_names.get(index).map(String::as_str)
    }

    /// The inputs as a signature shows them: `file_cid: Cid, image:
    /// op_image_decode::Image`, or `Cid, op_image_decode::Image` when the
    /// manifest names none.
    pub fn input_list(&self) -> String {
        let inputs = self.inputs.iter().enumerate().map(|(k, ty)| match self.input_name(k) {
            Some(name) => alloc::format!("{name}: {ty}"),
            None => ty.to_string(),
        });
        inputs.collect::<Vec<_>>().join(", ")
    }

    /// Whether the operation takes a variable number of inputs.
    pub fn is_flow_control(&self) -> bool {
        self.groups.iter().any(|g| g == FLOWCONTROL)
    }

    /// Whether the operation runs on `platform`.
    pub fn supports(&self, platform: Platform) -> bool {
        self.targets.contains(&platform)
    }
}

#[cfg(feature = "json")]
impl OperationManifest {
    /// Parses JSON (unknown fields refused) and checks the result.
    pub fn parse(text: &str) -> Result<Self, ManifestError> {
        let manifest: Self = serde_json::from_str(text)?;
        manifest.check()?;
        Ok(manifest)
    }

    /// The canonical JSON text (sorted keys, no whitespace; see [`crate::json`]).
    pub fn canonical_json(&self) -> String {
        let value = serde_json::to_value(self).expect("a manifest always serializes");
        crate::json::canonical(&value)
    }

    /// The pretty form committed as `operations/<op>/manifest.json`: sorted
    /// keys, two-space indent, trailing newline.
    pub fn pretty_json(&self) -> String {
        // Parsed back from the canonical text, so that keys stay sorted
        // whether or not serde_json's `preserve_order` is on.
        let value: serde_json::Value = serde_json::from_str(&self.canonical_json()).expect("canonical JSON parses");
        let mut text = serde_json::to_string_pretty(&value).expect("a value always serializes");
        text.push('\n');
        text
    }
}

#[cfg(all(feature = "json", feature = "content-id"))]
impl OperationManifest {
    /// The version id: the content id ([`crate::content_id`]) of the
    /// canonical JSON.
    pub fn version_id(&self) -> String {
        crate::content_id(self.canonical_json().as_bytes())
    }
}

#[cfg(feature = "serde")]
fn is_false(b: &bool) -> bool {
    !*b
}

/// A crate name as the rules above say.
fn is_crate_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= 64
}

/// `MAJOR.MINOR.PATCH`, optionally `-pre` and `+build` (semver 2.0.0).
fn is_semver(version: &str) -> bool {
    let (rest, build) = match version.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'));
    let idents =
        |s: &str| s.split('.').all(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| number(p)) && pre.is_none_or(idents) && build.is_none_or(idents)
}

/// An UPPER_CASE word: ASCII upper-case letters, digits and `_`.
fn is_group(group: &str) -> bool {
    !group.is_empty() && group.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn manifest() -> OperationManifest {
        OperationManifest {
            name: "op_x".into(),
            kind: Kind::Operation,
            version: "0.1.0".into(),
            description: "d".into(),
            inputs: vec![TypeName::Bytes],
            input_names: Vec::new(),
            output: Some(TypeName::Multihash),
            borrows: false,
            stream: false,
            config: [("hasher".to_string(), vec!["blake3".to_string(), "sha2-256".to_string()])].into(),
            groups: vec!["SYS".into()],
            features: vec!["std".into()],
            targets: vec![Platform::Native, Platform::Nostd],
            repository: String::new(),
            license: "MIT".into(),
            source: None,
            types: Default::default(),
        }
    }

    fn problems(edit: impl FnOnce(&mut OperationManifest)) -> Vec<Problem> {
        let mut m = manifest();
        edit(&mut m);
        m.problems()
    }

    #[test]
    fn a_valid_manifest_has_no_problems() {
        assert_eq!(manifest().problems(), []);
        assert!(manifest().check().is_ok());
        assert!(manifest().supports(Platform::Nostd) && !manifest().supports(Platform::Wasm));
    }

    #[test]
    fn every_problem_is_reported_at_once_with_its_field() {
        let found = problems(|m| {
            m.name = "1op".into();
            m.version = "0.1".into();
            m.description = " ".into();
            m.groups = vec!["sys".into(), "A".into(), "A".into()];
            m.config.insert("base".into(), vec![]);
            m.config.insert("codec".into(), vec!["raw".into(), "raw".into(), "a\u{0}".into()]);
            m.config.insert("a-b".into(), vec!["x".into()]);
            m.features = vec!["std".into(), "std".into()];
            m.targets = vec![Platform::Wasm, Platform::Wasm];
        });
        let fields: Vec<Field> = found.iter().map(Problem::field).collect();
        assert_eq!(
            fields,
            [
                Field::Name,
                Field::Version,
                Field::Description,
                Field::ConfigKey("a-b".into()),
                Field::ConfigKey("base".into()),
                Field::ConfigValue("codec".into(), 1),
                Field::ConfigValue("codec".into(), 2),
                Field::Group(0),
                Field::Group(2),
                Field::Feature(1),
                Field::Target(1),
            ]
        );
        let err = manifest_with(found);
        assert!(err.starts_with("operation manifest `op_x`: name `1op` is not a crate name"), "{err}");
        assert!(err.contains("; config `codec` lists \"raw\" twice; "), "{err}");
    }

    fn manifest_with(problems: Vec<Problem>) -> String {
        ManifestError::Invalid { name: "op_x".into(), problems }.to_string()
    }

    #[test]
    fn a_types_only_crate_has_types_and_nothing_of_an_operation() {
        let image = TypeDef::Record(vec![crate::FieldDef { name: "width".into(), ty: crate::FieldType::Number }]);
        let types_only = |m: &mut OperationManifest| {
            m.kind = Kind::Types;
            m.inputs.clear();
            m.output = None;
            m.config.clear();
            m.types = [("Image".to_string(), image.clone())].into();
        };
        assert_eq!(problems(types_only), []);
        assert_eq!(
            problems(|m| {
                types_only(m);
                m.types.clear();
                m.output = Some(TypeName::Bytes);
            }),
            [Problem::NotAnOperation { what: "output" }, Problem::NoTypes]
        );
        assert_eq!(
            problems(|m| {
                types_only(m);
                m.inputs.push(TypeName::Bytes);
            })[0]
                .to_string(),
            "a crate of value types only (kind \"types\") has no inputs; an operation is a crate of its own that depends on it"
        );
    }

    #[test]
    fn types_follow_flow_control() {
        let t = TypeName::Param("T".into());
        let vec_t = TypeName::Vec(alloc::boxed::Box::new(t.clone()));
        assert_eq!(problems(|m| m.inputs.clear()), [Problem::NoInputs]);
        assert_eq!(
            problems(|m| m.inputs = vec![TypeName::Bytes, t.clone()]),
            [Problem::GenericInput { index: 1, input: t.clone() }]
        );
        assert_eq!(problems(|m| m.output = Some(t.clone())), [Problem::UnboundOutput { output: t.clone() }]);
        assert_eq!(problems(|m| m.output = None), [Problem::NoOutput]);
        assert_eq!(problems(|m| m.stream = true), []);
        assert_eq!(
            problems(|m| {
                m.stream = true;
                m.borrows = true;
            }),
            [Problem::StreamBorrows]
        );
        assert_eq!(
            problems(|m| {
                m.stream = true;
                m.inputs.push(TypeName::String);
            })[0]
                .to_string(),
            "an operation with an incremental form (`stream`) takes one Bytes input (fed in chunks), not (Bytes, String)"
        );
        let flow = |m: &mut OperationManifest| {
            m.groups.push(FLOWCONTROL.into());
            m.inputs = vec![t.clone()];
            m.output = Some(vec_t.clone());
        };
        assert_eq!(problems(flow), []);
        assert_eq!(
            problems(|m| {
                flow(m);
                m.inputs.push(TypeName::Bytes);
            }),
            [Problem::FlowControlInputs { found: 2 }]
        );
        assert_eq!(
            Problem::GenericInput { index: 0, input: t }.to_string(),
            "input 0 `T` is generic, but only FLOWCONTROL operations take generic inputs"
        );
    }

    #[test]
    fn value_features_are_all_or_none() {
        assert_eq!(problems(|m| m.features = vec!["hasher-blake3".into(), "hasher-sha2-256".into()]), []);
        let found = problems(|m| m.features = vec!["hasher-blake3".into()]);
        assert_eq!(
            found,
            [Problem::ValueFeatures { key: "hasher".into(), first: 1, missing: vec!["hasher-sha2-256".into()] }]
        );
        assert_eq!(
            found[0].to_string(),
            "config `hasher` gates values behind cargo features, but the crate declares no `hasher-sha2-256`; \
             declare one feature per allowed value, or none"
        );
    }

    #[test]
    fn versions_are_semver() {
        for ok in ["0.1.0", "1.22.333", "1.0.0-alpha.1", "1.0.0+build.5", "1.0.0-rc-1+x"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["", "1", "1.0", "01.0.0", "1.0.0-", "1.0.0+", "1.0.0-a..b", "v1.0.0", "1.0.0.0", "1.0.x"] {
            assert!(!is_semver(bad), "{bad}");
        }
    }
}

#[cfg(all(test, feature = "json"))]
mod json_tests {
    use super::*;
    use alloc::string::ToString;

    const MANIFEST: &str = r#"{"config":{"hasher":["blake3","sha2-256"]},"description":"d","features":["std"],
        "groups":["SYS"],"inputs":["Bytes"],"license":"MIT","name":"op_x","output":"Multihash",
        "repository":"","targets":["native","nostd"],"version":"0.1.0"}"#;

    #[test]
    fn parses_and_canonicalizes() {
        let m = OperationManifest::parse(MANIFEST).unwrap();
        assert!(m.canonical_json().starts_with(r#"{"config":{"hasher":["blake3","sha2-256"]},"description":"d""#));
        assert_eq!(m.targets, [Platform::Native, Platform::Nostd]);
        assert_eq!(OperationManifest::parse(&m.pretty_json()).unwrap(), m);
        assert!(m.pretty_json().ends_with("\"version\": \"0.1.0\"\n}\n"));
    }

    #[cfg(feature = "content-id")]
    #[test]
    fn version_id_is_the_content_id_of_the_canonical_json() {
        let m = OperationManifest::parse(MANIFEST).unwrap();
        assert_eq!(m.version_id(), crate::content_id(m.canonical_json().as_bytes()));
        assert!(m.version_id().starts_with("bafkr4i"));
    }

    #[test]
    fn rejects_bad_manifests() {
        let err = |text: String| OperationManifest::parse(&text).unwrap_err().to_string();
        assert!(err(MANIFEST.replace("\"license\"", "\"licence\"")).contains("unknown field `licence`"));
        assert!(err(MANIFEST.replace("Multihash", "Vec<Hash")).contains("`Vec<Hash` is not a Braid type"));
        assert!(err(MANIFEST.replace("Multihash", "Hash")).contains("output `Hash` has a type parameter"));
        assert!(err(MANIFEST.replace("\"nostd\"", "\"riscv\"")).contains("unknown target `riscv`"));
        let e = err(MANIFEST.replace("[\"SYS\"]", "[\"sys\"]"));
        assert_eq!(e, "operation manifest `op_x`: group \"sys\" is not an UPPER_CASE word such as \"SYS\"");
    }
}
