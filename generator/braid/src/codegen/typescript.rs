//! The TypeScript declarations of a generated workflow's Wasm interface:
//! exact input tuples, output type and step shape, with no `any`. This is
//! their part of the [`CratePlan`](super::plan::CratePlan);
//! `templates/typescript.d.ts.hbs` renders them, and `lib.rs` embeds the
//! result for wasm-bindgen.

use serde::Serialize;

use super::literal::TsType;
use super::plan::{ExternalInput, SegmentPlan};

/// The types the declarations name.
#[derive(Debug, Clone, Serialize)]
pub struct TypeScript {
    /// The input tuples of `next` calls, one per segment that takes
    /// external input (consecutive repeats dropped).
    pub next_inputs: Vec<Vec<TsType>>,
    /// Every external input, for `run`.
    pub run_inputs: Vec<TsType>,
}

pub(super) fn plan(segments: &[SegmentPlan], external_inputs: &[ExternalInput]) -> TypeScript {
    let mut next_inputs: Vec<Vec<TsType>> = segments
        .iter()
        .filter(|s| !s.externals.is_empty())
        .map(|s| s.externals.iter().map(|e| e.ty.ts.clone()).collect())
        .collect();
    next_inputs.dedup();
    TypeScript { next_inputs, run_inputs: external_inputs.iter().map(|e| e.ty.ts.clone()).collect() }
}
