//! The TypeScript declarations of a generated workflow's Wasm interface:
//! exact input tuples, output type and step shape, with no `any`. This is
//! their part of the [`CratePlan`](super::plan::CratePlan);
//! `templates/typescript.d.ts.hbs` renders them, and `lib.rs` embeds the
//! result for wasm-bindgen.

use braid_schema::TypeName;
use serde::Serialize;

use super::literal::TsType;
use super::parts::{ExternalInput, SegmentPlan};
use crate::registry::RegisteredOperation;

/// The types the declarations name.
#[derive(Debug, Clone, Serialize)]
pub struct TypeScript {
    /// The input tuples of `next` calls, one per segment that takes
    /// external input, in order.
    pub next_inputs: Vec<SegmentInputs>,
    /// Every external input, for `run`.
    pub run_inputs: Vec<TsType>,
    /// The declarations of the value types of one's own the inputs and the
    /// output name (and those their fields name), sorted by qualified name.
    /// Built from checked manifests: every name in them is a plain
    /// identifier.
    pub declarations: Vec<String>,
}

/// `Segment<N>Inputs`: what the `next` call that reaches segment N takes.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentInputs {
    pub segment: usize,
    /// Which `next` call with inputs it is (1 for the first).
    pub call: usize,
    pub types: Vec<TsType>,
}

pub(super) fn plan(
    segments: &[SegmentPlan],
    external_inputs: &[ExternalInput],
    boundary: &[&TypeName],
    operations: &[RegisteredOperation],
) -> TypeScript {
    let next_inputs = segments
        .iter()
        .filter(|s| !s.externals.is_empty())
        .enumerate()
        .map(|(call, s)| SegmentInputs {
            segment: s.index,
            call: call + 1,
            types: s.externals.iter().map(|e| e.ts.clone()).collect(),
        })
        .collect();
    TypeScript {
        next_inputs,
        run_inputs: external_inputs.iter().map(|e| e.ts.clone()).collect(),
        declarations: declarations(boundary, operations),
    }
}

/// The declarations of the value types `types` name, directly or through
/// fields (the validator made sure each is defined).
fn declarations(types: &[&TypeName], operations: &[RegisteredOperation]) -> Vec<String> {
    crate::registry::named_types(operations, types)
        .into_iter()
        .filter_map(|(named, def)| match (named, def) {
            (TypeName::Named { name, .. }, Some(def)) => Some(def.ts_declaration(&name)),
            _ => None,
        })
        .collect()
}
