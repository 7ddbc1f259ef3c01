//! Checking a parsed manifest against the registry: operations and their
//! versions (semver requirement or `versionId`), config keys and values,
//! segment references (no forward references, every segment but the last
//! used), arity and the type of every edge, flow-control generics included.
//! All problems are reported, each at its JSON pointer.

use std::collections::BTreeMap;

use braid_schema::{Platform, TypeName};

use super::model::{InputRef, WorkflowManifest, EXTERNAL};
use super::parse::{parse, similar};
use super::workflow::{ResolvedSegment, SegmentInput, Workflow};
use super::{MAX_DIAGNOSTICS, MAX_EXTERNAL_INPUTS, MAX_OPERATIONS};
use crate::diagnostic::{quote, Diagnostic, Locations};
use crate::registry::{RegisteredOperation, Registry};

mod resolve;
mod segment;

/// Reads untrusted bytes ([`super::text`]: size, UTF-8), then
/// [`validate`]s them.
pub fn validate_bytes(bytes: &[u8], registry: &Registry) -> Result<Workflow, Vec<Diagnostic>> {
    validate(super::text(bytes)?, registry)
}

/// Parses and checks `text`. Diagnostics carry line and column, in reading
/// order, at most [`MAX_DIAGNOSTICS`] of them (then one that says how many
/// more there were).
pub fn validate(text: &str, registry: &Registry) -> Result<Workflow, Vec<Diagnostic>> {
    let (manifest, mut diagnostics) = parse(text);
    let workflow = manifest.and_then(|m| {
        let mut checker = Checker { registry, diagnostics: Vec::new() };
        let workflow = checker.check(m);
        diagnostics.extend(checker.diagnostics);
        workflow
    });
    match workflow {
        Some(w) if diagnostics.is_empty() => Ok(w),
        _ => {
            // The parser and checker report in document order, so the
            // first ones are kept; then reading order, as a compiler prints.
            let total = diagnostics.len();
            diagnostics.truncate(MAX_DIAGNOSTICS);
            Locations::annotate(text, &mut diagnostics);
            diagnostics.sort_by_key(|d| (d.line, d.column));
            if total > MAX_DIAGNOSTICS {
                diagnostics.push(
                    Diagnostic::new("", format!("{} more problem(s) not shown", total - MAX_DIAGNOSTICS))
                        .hint("fix the ones above and validate again"),
                );
            }
            Err(diagnostics)
        }
    }
}

/// An operation found in the registry, with its resolved config.
type Resolved = (RegisteredOperation, Vec<(String, String)>);

struct Checker<'r> {
    registry: &'r Registry,
    diagnostics: Vec<Diagnostic>,
}

impl<'r> Checker<'r> {
    fn error(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn check(&mut self, manifest: WorkflowManifest) -> Option<Workflow> {
        let refs = || manifest.segments.iter().flat_map(|s| &s.inputs);
        // Segments give external inputs by name or by -1, not both: with
        // names, which -1 is which would be a guess.
        let named = refs().any(|r| matches!(r, InputRef::Name(_)));
        let externals = refs().filter(|r| **r == InputRef::Index(EXTERNAL)).count();
        if externals > MAX_EXTERNAL_INPUTS {
            self.error(
                Diagnostic::new("/segments", "too many external inputs")
                    .expected(format!("at most {MAX_EXTERNAL_INPUTS} inputs of -1 over all segments"))
                    .found(externals.to_string())
                    .hint("pass many values as one input of a list type, e.g. a Vec<Bytes>"),
            );
        }
        if !named && !manifest.inputs.is_empty() && manifest.inputs.len() != externals {
            let example = manifest.inputs.first().map_or("photo", String::as_str);
            self.error(
                Diagnostic::new(
                    "/inputs",
                    format!(
                        "`inputs` names {} input(s), but the segments take {externals} (one per -1)",
                        manifest.inputs.len()
                    ),
                )
                .expected(format!("{externals} name(s): one per -1 in the segments' inputs, in order"))
                .found(format!("{} name(s)", manifest.inputs.len()))
                .hint(format!(
                    "to give one input to several segments, write its name instead of -1 in each of them, \
                     e.g. \"inputs\": [{example}] in one and [{example}, 0] in another",
                    example = quote(example)
                )),
            );
        }
        let operations = manifest.segments.iter().map(|s| s.sequence.len()).sum::<usize>();
        if operations > MAX_OPERATIONS {
            self.error(
                Diagnostic::new("/segments", "too many operations")
                    .expected(format!("at most {MAX_OPERATIONS} operations over all segments"))
                    .found(operations.to_string()),
            );
        }
        if !self.diagnostics.is_empty() {
            return None;
        }
        let mut segments: Vec<Option<ResolvedSegment>> = Vec::new();
        let mut used = vec![false; manifest.segments.len()];
        let mut input_used = vec![false; manifest.inputs.len()];
        let mut next_slot = 0;
        for (i, segment) in manifest.segments.iter().enumerate() {
            let pointer = format!("/segments/{i}");
            // References.
            let mut inputs: Vec<Option<(Source, Option<TypeName>)>> = Vec::new();
            for (k, r) in segment.inputs.iter().enumerate() {
                let at = format!("{pointer}/inputs/{k}");
                let source = match r {
                    InputRef::Index(EXTERNAL) if named => {
                        self.error(
                            Diagnostic::new(&at, "-1 in a manifest whose segments name their external inputs")
                                .expected(format!("an input's name: {}", names(&manifest.inputs)))
                                .found("-1")
                                .hint("once one segment names an input, write every external input by its name, so which is which is never a guess"),
                        );
                        None
                    }
                    InputRef::Index(EXTERNAL) => {
                        next_slot += 1;
                        Some(Source::External(next_slot - 1))
                    }
                    InputRef::Index(n) if *n >= i as i64 => {
                        self.error(
                            Diagnostic::new(&at, format!("segment {i} cannot use segment {n}"))
                                .expected(if i == 0 {
                                    "an external input (-1 or its name): the first segment has no earlier one"
                                        .to_string()
                                } else {
                                    format!("an external input (-1 or its name) or an earlier segment (0 to {})", i - 1)
                                })
                                .found(n.to_string())
                                .hint(
                                    "a segment may only use outputs of segments before it, so workflows have no cycles",
                                ),
                        );
                        None
                    }
                    InputRef::Index(n) => {
                        used[*n as usize] = true;
                        Some(Source::Segment(*n as usize))
                    }
                    InputRef::Name(name) => match manifest.inputs.iter().position(|x| x == name) {
                        Some(slot) => {
                            input_used[slot] = true;
                            Some(Source::External(slot))
                        }
                        None => {
                            self.unknown_input(&at, name, &manifest.inputs);
                            None
                        }
                    },
                };
                inputs.push(source.map(|source| match source {
                    Source::Segment(n) => (source, segments[n].as_ref().map(|s| s.output.clone())),
                    Source::External(_) => (source, None),
                }));
            }
            if segment.inputs.is_empty() {
                self.error(
                    Diagnostic::new(format!("{pointer}/inputs"), format!("segment {i} has no inputs"))
                        .expected("at least one input: -1 (external) or an earlier segment"),
                );
            }
            // Operations.
            let ops: Vec<Option<Resolved>> = segment
                .sequence
                .iter()
                .enumerate()
                .map(|(j, r)| self.resolve(r, &format!("{pointer}/sequence/{j}")))
                .collect();
            // Types along the chain.
            let resolved = self.type_segment(i, &inputs, &ops);
            segments.push(resolved);
        }
        if named {
            for (k, name) in manifest.inputs.iter().enumerate().filter(|(k, _)| !input_used[*k]) {
                self.error(
                    Diagnostic::new(format!("/inputs/{k}"), format!("input {} is never used", quote(name)))
                        .hint(format!("give it to a segment (write {} in its \"inputs\") or remove it", quote(name))),
                );
            }
        }
        self.check_input_types(&segments, &manifest.inputs);
        let last = manifest.segments.len().saturating_sub(1);
        for (i, was_used) in used.iter().enumerate() {
            if !was_used && i != last {
                self.error(
                    Diagnostic::new(format!("/segments/{i}"), format!("the output of segment {i} is never used")).hint(
                        format!("use it as an input of a later segment (e.g. \"inputs\": [{i}]) or remove the segment"),
                    ),
                );
            }
        }
        if !self.diagnostics.is_empty() {
            return None;
        }
        let segments: Vec<ResolvedSegment> = segments.into_iter().collect::<Option<_>>()?;
        if segments.is_empty() {
            return None;
        }
        // One version of each operation: the generated crate depends on
        // each operation's crate by its name.
        let mut operations: Vec<RegisteredOperation> = Vec::new();
        for (i, segment) in segments.iter().enumerate() {
            for (j, step) in segment.steps.iter().enumerate() {
                let op = &step.operation;
                match operations.iter().find(|o| o.name() == op.name()) {
                    Some(other) if other.version_id != op.version_id => self.error(
                        Diagnostic::new(
                            format!("/segments/{i}/sequence/{j}"),
                            format!(
                                "{} {} here, but {} elsewhere in the workflow",
                                op.name(),
                                op.version(),
                                other.version()
                            ),
                        )
                        .expected("one version of each operation per workflow")
                        .hint("use the same `version` requirement or `versionId` for every step of this operation"),
                    ),
                    Some(_) => {}
                    None => operations.push(op.clone()),
                }
            }
        }
        if !self.diagnostics.is_empty() {
            return None;
        }
        operations.sort_by(|a, b| a.name().cmp(b.name()));
        let crates = self.crates(&operations)?;
        self.check_boundary_types(&segments, &crates);
        if !self.diagnostics.is_empty() {
            return None;
        }
        let targets = Platform::ALL.into_iter().filter(|p| crates.iter().all(|op| op.manifest.supports(*p))).collect();
        let value = serde_json::to_value(&manifest).expect("a manifest serializes");
        let canonical = braid_schema::json::canonical(&value);
        let id = braid_schema::content_id(canonical.as_bytes());
        Some(Workflow { manifest, canonical, id, segments, targets, operations, crates })
    }

    /// `operations` and the registered crates they depend on, sorted by
    /// name; reports a dependency the registry cannot meet.
    fn crates(&mut self, operations: &[RegisteredOperation]) -> Option<Vec<RegisteredOperation>> {
        let files = operations.iter().map(|op| op.files()).collect::<Result<Vec<_>, _>>();
        let found = files.and_then(|files| {
            let roots: Vec<_> =
                operations.iter().zip(&files).map(|(op, files)| (op.name(), op.version(), files.as_ref())).collect();
            self.registry.dependencies(&roots)
        });
        match found {
            Ok(found) => {
                let mut crates: Vec<RegisteredOperation> = operations.iter().cloned().chain(found).collect();
                crates.sort_by(|a, b| a.name().cmp(b.name()));
                Some(crates)
            }
            Err(e) => {
                self.error(
                    Diagnostic::new("/segments", "the workflow's operations cannot be built together")
                        .found(e.to_string())
                        .hint("`braid ops NAME` lists the registered versions of a crate"),
                );
                None
            }
        }
    }

    /// `d` with a hint naming the registered operations that turn `from`
    /// into `to` (one input of `from`, output `to`), when there are any.
    fn convert_hint(&self, d: Diagnostic, from: &TypeName, to: &TypeName) -> Diagnostic {
        let mut converters: Vec<String> = self
            .registry
            .iter()
            .filter(|op| !op.manifest.is_flow_control() && op.manifest.inputs == [from.clone()])
            .filter(|op| op.manifest.output.as_ref() == Some(to))
            .map(|op| format!("`{}`", op.name()))
            .collect();
        converters.dedup();
        match converters.as_slice() {
            [] => d,
            [one] => d.hint(format!("{one} turns {from} into {to}: put it between them")),
            many => d.hint(format!("{} turn {from} into {to}: put one between them", many.join(" or "))),
        }
    }

    /// A segment names an external input that the manifest's `inputs` does
    /// not list.
    fn unknown_input(&mut self, pointer: &str, name: &str, inputs: &[String]) {
        let mut d = Diagnostic::new(pointer, format!("no external input is named {}", quote(name)))
            .expected(format!("an input's name: {}", names(inputs)))
            .found(quote(name));
        d = match inputs.iter().find(|known| similar(name, known)) {
            _ if name.parse::<i64>().is_ok() => {
                d.hint(format!("-1 and segment indices are numbers: write {name} without quotes"))
            }
            Some(known) => d.hint(format!("did you mean {}?", quote(known))),
            None => d.hint(format!(
                "list every external input in the manifest's \"inputs\", in the order `run` takes them, e.g. \"inputs\": [{}]",
                quote(name)
            )),
        };
        self.error(d);
    }

    /// A name given to several segments is one value: every step it goes
    /// to must take the same type.
    fn check_input_types(&mut self, segments: &[Option<ResolvedSegment>], names: &[String]) {
        let mut first: BTreeMap<usize, (&TypeName, String)> = BTreeMap::new();
        for (i, segment) in segments.iter().enumerate() {
            let Some(segment) = segment else { continue };
            for (k, input) in segment.inputs.iter().enumerate() {
                let SegmentInput::External { slot, ty } = input else { continue };
                let pointer = format!("/segments/{i}/inputs/{k}");
                match first.get(slot) {
                    None => {
                        first.insert(*slot, (ty, pointer));
                    }
                    Some((want, at)) if *want != ty => {
                        let name = names.get(*slot).map_or_else(|| format!("input {slot}"), |n| quote(n));
                        let d = Diagnostic::new(&pointer, format!("{name} goes to steps that take different types"))
                            .expected(format!("{want}, as at {at}"))
                            .found(ty.to_string())
                            .hint("one name is one value: give each its own input, or convert it first in a segment of its own");
                        self.error(d);
                    }
                    Some(_) => {}
                }
            }
        }
    }

    /// The value types of one's own at the workflow's boundary (external
    /// inputs, output) become JS objects with TypeScript declarations:
    /// each must be defined by a crate of the workflow (an operation's, or
    /// one they depend on), and no two may share a name (JS has one
    /// namespace for them).
    fn check_boundary_types(&mut self, segments: &[ResolvedSegment], crates: &[RegisteredOperation]) {
        let mut roots: Vec<(String, &TypeName)> = Vec::new();
        for (i, segment) in segments.iter().enumerate() {
            for (k, input) in segment.inputs.iter().enumerate() {
                if let SegmentInput::External { ty, .. } = input {
                    roots.push((format!("/segments/{i}/inputs/{k}"), ty));
                }
            }
        }
        let last = segments.len() - 1;
        roots.push((format!("/segments/{last}"), &segments[last].output));
        let mut by_name: BTreeMap<String, TypeName> = BTreeMap::new();
        for (pointer, root) in &roots {
            for (named, def) in crate::registry::named_types(crates, &[root]) {
                let TypeName::Named { krate, name } = &named else { continue };
                if def.is_none() {
                    self.error(
                        Diagnostic::new(pointer, format!("value type `{named}` has no definition here"))
                            .expected(format!(
                                "crate `{krate}` among the workflow's operations or their dependencies, defining `{name}`"
                            ))
                            .hint("a workflow's inputs and output become JS objects: use an operation of the crate that defines the type, or of one depending on it"),
                    );
                }
                match by_name.get(name) {
                    Some(other) if *other != named => self.error(
                        Diagnostic::new(
                            pointer,
                            format!("two value types named `{name}` at the workflow's inputs and output"),
                        )
                        .expected("value types with distinct names (TypeScript declares them side by side)")
                        .found(format!("{other} and {named}")),
                    ),
                    Some(_) => {}
                    None => {
                        by_name.insert(name.clone(), named.clone());
                    }
                }
            }
        }
    }
}

/// Where one of a segment's inputs comes from, once its reference is
/// resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// External input `slot`.
    External(usize),
    /// The output of segment `n`.
    Segment(usize),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::External(slot) => write!(f, "external input {slot}"),
            Source::Segment(n) => write!(f, "output of segment {n}"),
        }
    }
}

/// The input names, quoted, for an `expected`: `"photo", "salt"`.
fn names(inputs: &[String]) -> String {
    match inputs.is_empty() {
        true => "none is listed in the manifest's `inputs` yet".to_string(),
        false => inputs.iter().map(|n| quote(n)).collect::<Vec<_>>().join(", "),
    }
}

/// How many `Vec`s a type is nested in (`Vec<Vec<Bytes>>` is 2).
fn nesting(ty: &TypeName) -> usize {
    let mut depth = 0;
    let mut ty = ty;
    while let TypeName::Vec(inner) = ty {
        depth += 1;
        ty = inner;
    }
    depth
}
