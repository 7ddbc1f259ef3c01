//! Reading an untrusted manifest into [`WorkflowManifest`]: size limit,
//! JSON syntax, then every field's shape, collecting all problems (unknown
//! fields, wrong types, bad names, out-of-range numbers) instead of stopping
//! at the first.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::json::{self, kind};
use super::model::{InputRef, OperationRef, Segment, WorkflowManifest};
use super::{MAX_OPERATIONS_PER_SEGMENT, MAX_SEGMENTS, MAX_SEGMENT_INPUTS};
use crate::diagnostic::{escape_token, quote, Diagnostic};

/// Parses `text`. Returns the manifest (possibly partial) and diagnostics;
/// the manifest is `None` when the text is not a JSON object at all.
pub fn parse(text: &str) -> (Option<WorkflowManifest>, Vec<Diagnostic>) {
    let value = match json::read(text) {
        Ok(value) => value,
        Err(diagnostics) => return (None, diagnostics),
    };
    let mut p = Parser { diagnostics: Vec::new() };
    let manifest = p.manifest(&value);
    (manifest, p.diagnostics)
}

struct Parser {
    diagnostics: Vec<Diagnostic>,
}

impl Parser {
    fn error(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn object<'v>(&mut self, value: &'v Value, pointer: &str, what: &str) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(map) => Some(map),
            other => {
                self.error(
                    Diagnostic::new(pointer, format!("{what} must be an object"))
                        .expected("an object")
                        .found(kind(other)),
                );
                None
            }
        }
    }

    /// Reports keys other than `allowed`.
    fn unknown_keys(&mut self, map: &Map<String, Value>, pointer: &str, allowed: &[&str]) {
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                let mut d = Diagnostic::new(
                    format!("{pointer}/{}", escape_token(key)),
                    format!("unknown field {}", quote(key)),
                )
                .at_key()
                .expected(format!("one of {}", allowed.join(", ")));
                if let Some(close) = allowed.iter().find(|a| a.eq_ignore_ascii_case(key) || similar(a, key)) {
                    d = d.hint(format!("did you mean `{close}`?"));
                }
                self.error(d);
            }
        }
    }

    fn string(&mut self, map: &Map<String, Value>, key: &str, pointer: &str, required: bool) -> Option<String> {
        let p = format!("{pointer}/{key}");
        match map.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.error(
                    Diagnostic::new(p, format!("`{key}` must be a string")).expected("a string").found(kind(other)),
                );
                None
            }
            None if required => {
                self.error(
                    Diagnostic::new(pointer, format!("missing field `{key}`")).expected(format!("a `{key}` string")),
                );
                None
            }
            None => None,
        }
    }

    fn manifest(&mut self, value: &Value) -> Option<WorkflowManifest> {
        let map = self.object(value, "", "the manifest")?;
        self.unknown_keys(map, "", &["$schema", "name", "version", "description", "groups", "inputs", "segments"]);
        // `$schema` names the JSON Schema an editor reads (`braid schema`);
        // it is not part of the workflow (nor of its id).
        let _ = self.string(map, "$schema", "", false);
        let name = self.string(map, "name", "", true).unwrap_or_default();
        if map.get("name").is_some_and(Value::is_string) {
            self.check_name(&name);
        }
        let version = self.string(map, "version", "", true).unwrap_or_default();
        if map.get("version").is_some_and(Value::is_string) {
            if let Err(problem) = package_version(&version) {
                self.error(
                    Diagnostic::new("/version", format!("`version` {problem}"))
                        .expected("MAJOR.MINOR.PATCH valid for cargo and npm, e.g. 0.1.0")
                        .found(quote(&version)),
                );
            }
        }
        let description = self.string(map, "description", "", false).unwrap_or_default();
        if let Some(c) = description.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\t')) {
            // Cargo hands the description to rustc in an environment
            // variable, which cannot hold NUL; no control character is text.
            self.error(
                Diagnostic::new("/description", "the description contains a control character")
                    .expected("text; newlines and tabs are fine")
                    .found(format!("U+{:04X}", c as u32)),
            );
        }
        if description.chars().count() > 4096 {
            self.error(
                Diagnostic::new("/description", "the description is too long")
                    .expected("at most 4096 characters")
                    .found(format!("{} characters", description.chars().count())),
            );
        }
        let groups = match map.get("groups") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, g)| {
                    let p = format!("/groups/{i}");
                    match g {
                        Value::String(s) if is_group(s) => Some(s.clone()),
                        other => {
                            self.error(
                                Diagnostic::new(p, "a group is an UPPER_CASE word")
                                    .expected("a string such as \"SYS\" (A-Z, 0-9, _; at most 64)")
                                    .found(kind(other)),
                            );
                            None
                        }
                    }
                })
                .collect(),
            Some(other) => {
                self.error(
                    Diagnostic::new("/groups", "`groups` must be an array of strings")
                        .expected("an array")
                        .found(kind(other)),
                );
                Vec::new()
            }
        };
        let inputs = self.input_names(map.get("inputs"));
        let segments = match map.get("segments") {
            None => {
                self.error(Diagnostic::new("", "missing field `segments`").expected("an array of 1 to 128 segments"));
                Vec::new()
            }
            Some(Value::Array(items)) => {
                if items.is_empty() || items.len() > MAX_SEGMENTS {
                    self.error(
                        Diagnostic::new("/segments", "wrong number of segments")
                            .expected(format!("1 to {MAX_SEGMENTS} segments"))
                            .found(format!("{}", items.len())),
                    );
                }
                items.iter().take(MAX_SEGMENTS).enumerate().map(|(i, s)| self.segment(s, i)).collect()
            }
            Some(other) => {
                self.error(
                    Diagnostic::new("/segments", "`segments` must be an array").expected("an array").found(kind(other)),
                );
                Vec::new()
            }
        };
        Some(WorkflowManifest { name, version, description, groups, inputs, segments })
    }

    /// `inputs`: the external inputs' names, each a lower-case identifier
    /// that Rust, JS and TypeScript take as a parameter or label as it is,
    /// given once. (Their number is checked against the segments later.)
    fn input_names(&mut self, value: Option<&Value>) -> Vec<String> {
        let items = match value {
            None => return Vec::new(),
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.error(
                    Diagnostic::new("/inputs", "`inputs` must be an array of names")
                        .expected(
                            "e.g. [\"photo\", \"salt\"]: one name per external input, in the order `run` takes them",
                        )
                        .found(kind(other)),
                );
                return Vec::new();
            }
        };
        if items.is_empty() {
            self.error(
                Diagnostic::new("/inputs", "`inputs` is empty")
                    .expected("one name per external input, in the order `run` takes them, or no `inputs` field"),
            );
        }
        let mut names: Vec<String> = Vec::new();
        for (i, item) in items.iter().take(super::MAX_EXTERNAL_INPUTS + 1).enumerate() {
            let pointer = format!("/inputs/{i}");
            let Value::String(name) = item else {
                self.error(
                    Diagnostic::new(pointer, "an input's name is a string")
                        .expected("a name such as \"photo\"")
                        .found(kind(item)),
                );
                continue;
            };
            if let Err(why) = input_name(name) {
                self.error(
                    Diagnostic::new(&pointer, format!("{} cannot name an input: {why}", quote(name)))
                        .expected("a lower-case letter, then lower-case letters, digits or `_` (at most 64), not a Rust or JS keyword")
                        .found(quote(name)),
                );
            } else if names.contains(name) {
                self.error(
                    Diagnostic::new(&pointer, format!("input name {} is given twice", quote(name)))
                        .expected("a name of its own for each input"),
                );
            }
            names.push(name.clone());
        }
        names
    }

    fn check_name(&mut self, name: &str) {
        let ok = name.len() <= 64
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok {
            self.error(
                Diagnostic::new("/name", "the workflow name cannot name a crate")
                    .expected("a letter, then letters, digits, `_` or `-` (at most 64)")
                    .found(quote(name))
                    .hint("the generated crate is called `wf_<name>`"),
            );
        }
    }

    fn segment(&mut self, value: &Value, index: usize) -> Segment {
        let pointer = format!("/segments/{index}");
        let Some(map) = self.object(value, &pointer, &format!("segment {index}")) else {
            return Segment { inputs: Vec::new(), sequence: Vec::new() };
        };
        self.unknown_keys(map, &pointer, &["inputs", "sequence"]);
        let inputs = match map.get("inputs") {
            Some(Value::Array(items)) => {
                if items.len() > MAX_SEGMENT_INPUTS {
                    self.error(
                        Diagnostic::new(format!("{pointer}/inputs"), "too many inputs in a segment")
                            .expected(format!("at most {MAX_SEGMENT_INPUTS} inputs"))
                            .found(format!("{}", items.len()))
                            .hint("collect the values in stages: segments of up to 64 inputs, then a segment over their outputs"),
                    );
                }
                items
                    .iter()
                    .take(MAX_SEGMENT_INPUTS)
                    .enumerate()
                    .filter_map(|(i, v)| match v {
                        Value::String(name) => Some(InputRef::Name(name.clone())),
                        _ => match v.as_i64() {
                            Some(n) if n >= -1 => Some(InputRef::Index(n)),
                            _ => {
                                self.error(
                                    Diagnostic::new(
                                        format!("{pointer}/inputs/{i}"),
                                        "an input is -1, the index of an earlier segment, or an input's name",
                                    )
                                    .expected("-1 (external input), the index of an earlier segment, or a name from the manifest's `inputs`")
                                    .found(kind(v)),
                                );
                                None
                            }
                        },
                    })
                    .collect()
            }
            Some(other) => {
                self.error(
                    Diagnostic::new(format!("{pointer}/inputs"), "`inputs` must be an array")
                        .expected("e.g. [-1], [0, -1] or [\"photo\", 0]")
                        .found(kind(other)),
                );
                Vec::new()
            }
            None => {
                self.error(Diagnostic::new(&pointer, "missing field `inputs`").expected(
                    "an array, e.g. [-1] for one external input, or [\"photo\"] for the input named `photo`",
                ));
                Vec::new()
            }
        };
        let sequence = match map.get("sequence") {
            Some(Value::Array(items)) => {
                if items.is_empty() || items.len() > MAX_OPERATIONS_PER_SEGMENT {
                    self.error(
                        Diagnostic::new(format!("{pointer}/sequence"), "wrong number of operations in a segment")
                            .expected(format!("1 to {MAX_OPERATIONS_PER_SEGMENT} operations"))
                            .found(format!("{}", items.len())),
                    );
                }
                items
                    .iter()
                    .take(MAX_OPERATIONS_PER_SEGMENT)
                    .enumerate()
                    .map(|(j, v)| self.operation(v, &format!("{pointer}/sequence/{j}")))
                    .collect()
            }
            Some(other) => {
                self.error(
                    Diagnostic::new(format!("{pointer}/sequence"), "`sequence` must be an array of operations")
                        .expected("an array")
                        .found(kind(other)),
                );
                Vec::new()
            }
            None => {
                self.error(Diagnostic::new(&pointer, "missing field `sequence`").expected("an array of operations"));
                Vec::new()
            }
        };
        Segment { inputs, sequence }
    }

    fn operation(&mut self, value: &Value, pointer: &str) -> OperationRef {
        let empty = OperationRef { operation: None, version: None, version_id: None, config: BTreeMap::new() };
        let Some(map) = self.object(value, pointer, "an operation") else { return empty };
        self.unknown_keys(map, pointer, &["operation", "version", "versionId", "config"]);
        let operation = self.string(map, "operation", pointer, false);
        let version = self.string(map, "version", pointer, false);
        let version_id = self.string(map, "versionId", pointer, false);
        if operation.is_none()
            && version_id.is_none()
            && !map.contains_key("operation")
            && !map.contains_key("versionId")
        {
            self.error(
                Diagnostic::new(pointer, "an operation needs `operation` (with `version`) or `versionId`")
                    .hint("`braid ops` lists operations with their versions and version ids"),
            );
        }
        let mut config = BTreeMap::new();
        match map.get("config") {
            None => {}
            Some(Value::Object(entries)) => {
                for (key, v) in entries {
                    match v {
                        Value::String(s) => {
                            config.insert(key.clone(), s.clone());
                        }
                        other => self.error(
                            Diagnostic::new(
                                format!("{pointer}/config/{}", escape_token(key)),
                                "config values are strings",
                            )
                            .expected("a string")
                            .found(kind(other)),
                        ),
                    }
                }
            }
            Some(other) => self.error(
                Diagnostic::new(format!("{pointer}/config"), "`config` must be an object of strings")
                    .expected("e.g. { \"hasher\": \"blake3\" }")
                    .found(kind(other)),
            ),
        }
        OperationRef { operation, version, version_id, config }
    }
}

/// Checks a workflow version: semver (cargo) and within npm's bounds (at
/// most 256 characters; each number at most 2^53 - 1, since npm reads them
/// as JavaScript numbers). Says what is wrong.
fn package_version(text: &str) -> Result<(), &'static str> {
    const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
    let v = semver::Version::parse(text).map_err(|_| "is not a semantic version")?;
    if text.len() > 256 {
        return Err("is longer than npm allows (256 characters)");
    }
    if [v.major, v.minor, v.patch].iter().any(|&n| n > MAX_SAFE_INTEGER) {
        return Err("has a number larger than npm allows (2^53 - 1)");
    }
    Ok(())
}

fn is_group(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Edit distance of at most 2, for "did you mean" (names longer than 64
/// characters are never similar: the distance costs their product).
pub fn similar(a: &str, b: &str) -> bool {
    let (la, lb) = (a.chars().count(), b.chars().count());
    la.abs_diff(lb) <= 2 && lb <= 64 && strsim::levenshtein(a, b) <= 2
}

/// Words an input may not be called besides Rust's keywords
/// ([`braid_schema::RUST_KEYWORDS`]): JS's keywords and reserved words, and
/// the functions of the generated crate that take the inputs as parameters
/// (a parameter would shadow them).
const RESERVED_INPUT_NAMES: &[&str] = &[
    "arguments",
    "case",
    "catch",
    "class",
    "debugger",
    "default",
    "delete",
    "eval",
    "export",
    "extends",
    "finally",
    "function",
    "implements",
    "import",
    "instanceof",
    "interface",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "run",
    "run_sync",
    "run_with",
    "switch",
    "this",
    "throw",
    "undefined",
    "union",
    "var",
    "void",
    "with",
];

/// Whether `name` can name an external input; why not, if not.
fn input_name(name: &str) -> Result<(), &'static str> {
    if !braid_schema::is_lower_identifier(name) {
        return Err("it is not a lower-case identifier");
    }
    if braid_schema::RUST_KEYWORDS.contains(&name) || RESERVED_INPUT_NAMES.contains(&name) {
        return Err("it is a reserved word");
    }
    Ok(())
}
