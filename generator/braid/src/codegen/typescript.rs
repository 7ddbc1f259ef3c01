//! The TypeScript declarations of a generated workflow's Wasm interface:
//! exact input tuples, output type and step shape, with no `any`.

use braid_support::typename::TypeName;

use crate::manifest::check::{SegmentInput, Workflow};

pub fn declarations(w: &Workflow) -> String {
    let tuple =
        |types: Vec<&TypeName>| format!("[{}]", types.iter().map(|t| t.ts_type()).collect::<Vec<_>>().join(", "));
    let per_segment: Vec<String> = w
        .segments
        .iter()
        .filter_map(|s| {
            let ext: Vec<&TypeName> = s
                .inputs
                .iter()
                .filter_map(|i| match i {
                    SegmentInput::External { ty, .. } => Some(ty),
                    SegmentInput::Segment { .. } => None,
                })
                .collect();
            (!ext.is_empty()).then(|| tuple(ext))
        })
        .collect();
    let mut inputs = per_segment.clone();
    inputs.dedup();
    let all = w.external_inputs();
    let name = w.manifest.name.as_str();
    format!(
        r#"/** External inputs of one `next` call: those of the next segment that needs input, in order. */
export type Inputs = {inputs};
/** Every external input of the workflow, in order, for `run`. */
export type RunInputs = {run};
/** The output of workflow `{name}` ({output_name}). */
export type Output = {output};
/** What one `next` call did; times are in milliseconds. */
export type Step =
  | {{ done: false; output: undefined; segmentTime?: number; totalTime?: number }}
  | {{ done: true; output: Output; segmentTime?: number; totalTime?: number }};

/** A running instance of workflow `{name}`. (It also has `[Symbol.dispose]`; not declared, so consumers need no `esnext` lib.) */
export class Workflow {{
  free(): void;
  constructor();
  /** Runs segments until one needs external input or the workflow is done. Rejects with an `Error` saying what was expected on wrong inputs, or when already done. */
  next(inputs: Inputs): Promise<Step>;
  /** Whether every segment has run. */
  readonly done: boolean;
  /** The state between `next` calls, to `Workflow.resume` later. */
  suspend(): Uint8Array;
  /** A workflow continuing from a suspended state. */
  static resume(state: Uint8Array): Workflow;
}}

/** Runs the whole workflow with every external input at once. */
export function run(inputs: RunInputs): Promise<Output>;

/** `run`, synchronously: throws an `Error` instead of rejecting. */
export function runSync(inputs: RunInputs): Output;
"#,
        inputs = inputs.join(" | "),
        run = tuple(all.iter().collect()),
        output = w.output().ts_type(),
        output_name = w.output(),
    )
}
