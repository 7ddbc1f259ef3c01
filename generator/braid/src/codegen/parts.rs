//! The parts of a crate's plan: its value types, external inputs, segments,
//! steps and dependencies, as the templates and the component and
//! TypeScript planners ([`super::component`], [`super::typescript`]) read
//! them. [`super::plan`] assembles them.

use braid_support::typename::TypeName;
use serde::Serialize;

use super::literal::{Ident, Plain, RustStr, RustType, TomlStr, TsType};

/// The crate's description (the manifest's, or a default).
#[derive(Debug, Clone, Serialize)]
pub struct Description {
    pub rust: RustStr,
    pub toml: TomlStr,
}

/// A value type in every spelling a template needs.
#[derive(Debug, Clone, Serialize)]
pub struct ValueType {
    pub rust: RustType,
    pub ts: TsType,
    /// The manifest type name, for comments (`Vec<Cid>`).
    pub name: Plain,
    /// The manifest type name as a Rust string literal.
    pub name_lit: RustStr,
    /// Its variant of `Input`: `Bytes`, `VecBytes`, `VecVecCid`.
    pub variant: Ident,
}

impl ValueType {
    pub(super) fn new(ty: &TypeName) -> Self {
        let name = ty.to_string();
        Self {
            rust: RustType::new(ty),
            ts: TsType::new(ty),
            name: Plain::new(&name).expect("type names are plain"),
            name_lit: RustStr::new(&name),
            variant: Ident::new(&variant(ty)),
        }
    }
}

/// An enum variant name for a type: `Bytes`, `VecBytes`, `VecVecCid`,
/// `ValueOpImageDecodeImage` (`op_image_decode::Image`: the prefix keeps
/// value types apart from the others; two value types that spell the same
/// here would be a compile error, not a mix-up).
fn variant(ty: &TypeName) -> String {
    match ty {
        TypeName::Vec(inner) => format!("Vec{}", variant(inner)),
        TypeName::Named { krate, name } => {
            let camel: String = krate
                .split('_')
                .map(|part| {
                    let mut chars = part.chars();
                    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
                })
                .collect();
            format!("Value{camel}{name}")
        }
        other => other.to_string(),
    }
}

/// An external input: the `slot`-th of the workflow, the `position`-th of
/// its segment.
#[derive(Debug, Clone, Serialize)]
pub struct ExternalInput {
    pub slot: usize,
    pub position: usize,
    pub ty: ValueType,
    /// `run`'s parameter: the manifest's name for it (`inputs`), or
    /// `input<slot>`.
    pub param: Ident,
    /// Its TypeScript tuple element: `photo: Uint8Array` when named.
    pub ts: TsType,
    /// Where it is, for JS errors: `"<name> input <slot>"`, and `(photo)`
    /// when named.
    pub place_lit: RustStr,
}

/// One segment: a function of its inputs (parameter `x<k>` is input `k`,
/// by reference) running its steps in order.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentPlan {
    pub index: usize,
    /// Its inputs, in order: what `next` and `run` pass (each an
    /// [`Arg::External`] or an [`Arg::Memo`]).
    pub inputs: Vec<Param>,
    /// The external inputs it is the first to take, in order: what `next`
    /// expects for it.
    pub externals: Vec<ExternalInput>,
    /// The slots among `externals` that a later segment takes too: `next`
    /// keeps them (as [`Memo`]s `i<slot>`) after this segment.
    pub keeps: Vec<usize>,
    pub steps: Vec<StepPlan>,
    pub output: ValueType,
    /// The last segment: its output is the workflow's.
    pub last: bool,
    /// Earlier segments whose output no later segment uses: `run` drops
    /// them after this one.
    pub drops: Vec<usize>,
}

/// A segment that takes external input: the next one to for every cursor
/// in `from..=segment`, with the manifest type names of those inputs.
#[derive(Debug, Clone, Serialize)]
pub struct NextInputs {
    pub from: usize,
    pub segment: usize,
    pub types: Vec<RustStr>,
}

/// `next`'s typed entry (see `CratePlan::typed_next`): the segment, its
/// inputs' kinds (`b`, `s`), and those inputs in the order `next` takes them.
#[derive(Debug, Clone, Serialize)]
pub struct TypedNext {
    pub segment: usize,
    pub kinds: Plain,
    pub externals: Vec<ExternalInput>,
}

/// Input `position` of a segment (its parameter `x<position>`).
#[derive(Debug, Clone, Serialize)]
pub struct Param {
    pub position: usize,
    pub ty: ValueType,
    pub arg: Arg,
}

/// An argument: of a segment (at the calls in `next` and `run`), or of a
/// step (in the segment's function).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arg {
    /// External input `slot`, the segment's input `position`; `kept` when
    /// an earlier segment took it first (`next` reads it from its memo).
    External { slot: usize, position: usize, kept: bool },
    /// The memoised output of segment `segment`, the segment's input `position`.
    Memo { segment: usize, position: usize },
    /// The output of step `step` of the same segment; `borrowed` when that
    /// operation returns a reference into its input (passed as it is).
    Previous { step: usize, borrowed: bool },
    /// The list a flow-control operation takes: references to `items`.
    Collect { items: Vec<Arg> },
}

/// One operation call.
#[derive(Debug, Clone, Serialize)]
pub struct StepPlan {
    pub index: usize,
    /// The operation's crate.
    #[serde(rename = "crate")]
    pub krate: Ident,
    pub args: Vec<Arg>,
    /// Whether its output is borrowed from its input (`&'a T`).
    pub borrows: bool,
    /// Its resolved config, sorted by key.
    pub config: Vec<ConfigPair>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigPair {
    pub key: RustStr,
    pub value: RustStr,
}

/// A value `next` keeps (as `Rc`) between calls, from when segment `after`
/// has run until segment `last_use` has: the output of segment `after`
/// (field `s<after>`), or an external input a later segment takes too
/// (field `i<slot>`).
#[derive(Debug, Clone, Serialize)]
pub struct Memo {
    pub field: Ident,
    pub after: usize,
    pub ty: ValueType,
    pub last_use: usize,
}

/// A vendored registered crate the generated crate depends on (an
/// operation, or a crate operations depend on).
#[derive(Debug, Clone, Serialize)]
pub struct Dependency {
    pub name: Ident,
    /// Its directory under `vendor/` (`vendor::dir_name`).
    pub dir: Plain,
    /// The cargo features that compile in the config values the workflow uses.
    pub features: Vec<TomlStr>,
    /// Whether it has a `std` feature (enabled by the crate's `std`).
    pub std: bool,
}
