//! A workflow that passed every check ([`super::validate`]): the manifest
//! with its operations resolved in the registry, every segment typed, and
//! what code generation asks of it (signature, targets, features).

use std::collections::BTreeMap;

use braid_schema::{Platform, TypeName};

use super::model::WorkflowManifest;
use crate::registry::RegisteredOperation;

/// A manifest that passed every check, with everything code generation needs.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub manifest: WorkflowManifest,
    /// The manifest's canonical JSON ([`braid_schema::json`]), made once
    /// here: what the workflow is hashed, keyed and stored as.
    pub canonical: String,
    /// CIDv1 (raw, blake3) of [`Workflow::canonical`].
    pub id: String,
    pub segments: Vec<ResolvedSegment>,
    /// Targets every operation allows.
    pub targets: Vec<Platform>,
    /// The operations used, sorted by name, without repeats.
    pub operations: Vec<RegisteredOperation>,
    /// Every registered crate the generated crate builds on: the
    /// operations and the registered crates they depend on (where value
    /// types they share are defined), one version each, sorted by name.
    pub crates: Vec<RegisteredOperation>,
}

#[derive(Debug, Clone)]
pub struct ResolvedSegment {
    pub inputs: Vec<SegmentInput>,
    pub steps: Vec<ResolvedStep>,
    pub output: TypeName,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentInput {
    /// External input number `slot`: the order `run` takes it in (the
    /// same slot in several places when a name is given to several).
    External { slot: usize, ty: TypeName },
    /// The output of an earlier segment.
    Segment { index: usize, ty: TypeName },
}

impl SegmentInput {
    pub fn ty(&self) -> &TypeName {
        match self {
            SegmentInput::External { ty, .. } | SegmentInput::Segment { ty, .. } => ty,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ResolvedStep {
    pub operation: RegisteredOperation,
    /// Every declared key with its value (given or default), sorted by key.
    pub config: Vec<(String, String)>,
    /// Input types as this step receives them (generics resolved).
    pub inputs: Vec<TypeName>,
    pub output: TypeName,
}

impl Workflow {
    /// The version id of every crate it builds on ([`Workflow::crates`]),
    /// by crate name: what its build key names, its build's report lists,
    /// and `braid build --operations` pins.
    pub fn crate_versions(&self) -> BTreeMap<String, String> {
        self.crates.iter().map(|c| (c.name().to_string(), c.version_id.clone())).collect()
    }

    /// The types of the external inputs, in the order `run` takes them
    /// (slot order), each once however many segments take it.
    pub fn external_inputs(&self) -> Vec<&TypeName> {
        let mut slots: BTreeMap<usize, &TypeName> = BTreeMap::new();
        for input in self.segments.iter().flat_map(|s| &s.inputs) {
            if let SegmentInput::External { slot, ty } = input {
                slots.entry(*slot).or_insert(ty);
            }
        }
        slots.into_values().collect()
    }

    /// How many places take external input `slot` (a named input may be
    /// given to several segments).
    pub fn uses_of_input(&self, slot: usize) -> usize {
        let uses = self.segments.iter().flat_map(|s| &s.inputs);
        uses.filter(|i| matches!(i, SegmentInput::External { slot: s, .. } if *s == slot)).count()
    }

    /// The workflow's output type (the last segment's).
    pub fn output(&self) -> &TypeName {
        &self.segments.last().expect("a valid workflow has a segment").output
    }

    /// The name of external input `slot`, if the manifest names its inputs.
    pub fn input_name(&self, slot: usize) -> Option<&str> {
        self.manifest.inputs.get(slot).map(String::as_str)
    }

    /// What `run` takes and gives, in manifest types: `String, Bytes -> Cid`,
    /// or `text: String, salt: Bytes -> Cid` when the inputs are named.
    pub fn signature(&self) -> String {
        let inputs: Vec<String> = self
            .external_inputs()
            .iter()
            .enumerate()
            .map(|(slot, ty)| match self.input_name(slot) {
                Some(name) => format!("{name}: {ty}"),
                None => ty.to_string(),
            })
            .collect();
        format!("{} -> {}", inputs.join(", "), self.output())
    }

    pub fn supports(&self, platform: Platform) -> bool {
        self.targets.contains(&platform)
    }

    /// The cargo features of operation `name` that compile in the config
    /// values its steps use (`braid_schema::value_feature`), for the
    /// operations that gate values behind features; sorted, no repeats.
    pub fn value_features(&self, name: &str) -> Vec<String> {
        let steps = self.segments.iter().flat_map(|s| &s.steps).filter(|s| s.operation.name() == name);
        let features: std::collections::BTreeSet<String> = steps
            .flat_map(|step| {
                step.config
                    .iter()
                    .map(|(key, value)| braid_schema::value_feature(key, value))
                    .filter(|feature| step.operation.manifest.features.contains(feature))
            })
            .collect();
        features.into_iter().collect()
    }
}
