//! Finding the operation a sequence entry names: by `versionId`, or by name
//! and a semver requirement (the highest version it allows), with its config
//! resolved against the operation's declared keys and values.

use braid_schema::Kind;

use super::{Checker, Resolved};
use crate::diagnostic::{quote, Diagnostic};
use crate::manifest::model::OperationRef;
use crate::manifest::parse::similar;
use crate::registry::RegisteredOperation;

impl<'r> Checker<'r> {
    /// Finds the operation a sequence entry names and resolves its config.
    pub(super) fn resolve(&mut self, r: &OperationRef, pointer: &str) -> Option<Resolved> {
        let op = if let Some(id) = &r.version_id {
            let Some(op) = self.registry.by_version_id(id) else {
                self.error(
                    Diagnostic::new(format!("{pointer}/versionId"), "no operation in the registry has this version id")
                        .found(quote(id))
                        .hint("`braid ops` lists version ids"),
                );
                return None;
            };
            if let Some(name) = &r.operation {
                if name != op.name() {
                    self.error(
                        Diagnostic::new(
                            format!("{pointer}/operation"),
                            "`operation` and `versionId` name different operations",
                        )
                        .expected(format!("\"{}\" (the operation of this versionId)", op.name()))
                        .found(quote(name)),
                    );
                    return None;
                }
            }
            op.clone()
        } else {
            let name = r.operation.as_ref()?;
            if self.registry.get(name).is_none() {
                let known = self.registry.names();
                let mut d = Diagnostic::new(format!("{pointer}/operation"), "unknown operation")
                    .expected(format!("one of {}", known.join(", ")))
                    .found(quote(name))
                    .hint("`braid ops` lists the registry; `braid ops add DIR` adds an operation crate");
                if let Some(close) = known.iter().find(|k| similar(k, name)) {
                    d = d.hint(format!("did you mean \"{close}\"?"));
                }
                self.error(d);
                return None;
            }
            self.select(name, r.version.as_deref(), pointer)?.clone()
        };
        if r.version_id.is_some() && !self.version_matches(&op, r.version.as_deref(), pointer) {
            return None;
        }
        if op.manifest.kind == Kind::Types {
            let types: Vec<String> = op.manifest.types.keys().map(|t| format!("{}::{t}", op.name())).collect();
            self.error(
                Diagnostic::new(pointer, format!("{} is a crate of value types only, not an operation", op.name()))
                    .expected("an operation")
                    .found(format!("{} {} (defines {})", op.name(), op.manifest.version, types.join(", ")))
                    .hint("operations that take or return its types depend on it; `braid ops` lists the operations"),
            );
            return None;
        }
        // Config.
        let keys = &op.manifest.config;
        let name = op.name();
        let mut ok = true;
        for (key, value) in &r.config {
            let p = format!("{pointer}/config/{}", crate::diagnostic::escape_token(key));
            match keys.get(key) {
                None => {
                    ok = false;
                    let expected = if keys.is_empty() {
                        format!("no config: {name} takes none")
                    } else {
                        format!("one of {}", keys.keys().map(String::as_str).collect::<Vec<_>>().join(", "))
                    };
                    let mut d = Diagnostic::new(p, format!("{name} has no config key {}", quote(key)))
                        .at_key()
                        .expected(expected);
                    if let Some(close) = keys.keys().find(|k| similar(k, key)) {
                        d = d.hint(format!("did you mean \"{close}\"?"));
                    }
                    self.error(d);
                }
                Some(allowed) if !allowed.contains(value) => {
                    ok = false;
                    let mut d = Diagnostic::new(p, format!("{name} does not allow this value for `{key}`"))
                        .expected(format!("one of {}", allowed.join(", ")))
                        .found(quote(value));
                    if let Some(close) = allowed.iter().find(|v| similar(v, value)) {
                        d = d.hint(format!("did you mean \"{close}\"?"));
                    }
                    self.error(d);
                }
                Some(_) => {}
            }
        }
        if !ok {
            return None;
        }
        // A missing key takes its first allowed value.
        let config = keys
            .iter()
            .filter_map(|(key, allowed)| {
                let value = r.config.get(key).or(allowed.first())?;
                Some((key.clone(), value.clone()))
            })
            .collect();
        Some((op, config))
    }

    /// The highest version of `name` that `requirement` (none: any)
    /// allows; reports why there is none.
    fn select(&mut self, name: &str, requirement: Option<&str>, pointer: &str) -> Option<&'r RegisteredOperation> {
        let registry = self.registry;
        let Some(text) = requirement else { return registry.get(name) };
        let req = self.requirement(text, false, pointer)?;
        if let Some(op) = registry.select(name, &req) {
            return Some(op);
        }
        let versions: Vec<String> = registry.versions(name).iter().map(|op| op.version().to_string()).collect();
        let newest = registry.get(name)?.version().clone();
        self.error(
            Diagnostic::new(format!("{pointer}/version"), format!("no version of {name} matches {}", quote(text)))
                .expected(format!(
                    "a requirement that one of {} satisfies, e.g. \"^{}\"",
                    versions.join(", "),
                    short(&newest)
                ))
                .found(quote(text)),
        );
        None
    }

    /// `text` as a semver requirement, or a diagnostic.
    fn requirement(&mut self, text: &str, pinned: bool, pointer: &str) -> Option<semver::VersionReq> {
        match semver::VersionReq::parse(text) {
            Ok(req) => Some(req),
            Err(e) => {
                self.error(
                    Diagnostic::new(format!("{pointer}/version"), format!("not a version requirement: {e}"))
                        .expected(if pinned {
                            "a semver requirement such as \"^0.1\", or no `version` with `versionId`"
                        } else {
                            "a semver requirement such as \"^0.1\""
                        })
                        .found(quote(text)),
                );
                None
            }
        }
    }

    /// Whether `op`, named by `versionId`, satisfies the `version` next to
    /// it (none: any); reports why not.
    fn version_matches(&mut self, op: &RegisteredOperation, requirement: Option<&str>, pointer: &str) -> bool {
        let Some(text) = requirement else { return true };
        let Some(req) = self.requirement(text, true, pointer) else { return false };
        let (name, version) = (op.name(), op.version());
        if req.matches(version) {
            return true;
        }
        self.error(
            Diagnostic::new(
                format!("{pointer}/version"),
                format!("`version` and `versionId` disagree: the versionId is {name} {version}"),
            )
            .expected(format!("a requirement that {version} satisfies, or no `version`"))
            .found(quote(text)),
        );
        false
    }
}

fn short(v: &semver::Version) -> String {
    if v.major == 0 {
        format!("0.{}", v.minor)
    } else {
        v.major.to_string()
    }
}
