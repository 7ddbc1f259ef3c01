//! The typed plan of a generated crate: everything its files need (types,
//! segments, steps and their arguments, memo liveness, dependencies,
//! features), computed once from a checked [`Workflow`] and handed as is to
//! every template (`lib.rs`, `Cargo.toml`, the TypeScript declarations,
//! `braid run`'s runner). Every string in it is one of [`literal`]'s safe
//! types; the syntax around them lives in `templates/`.

use braid_schema::Platform;
use braid_support::typename::TypeName;
use serde::Serialize;

use super::component::{self, ComponentPlan};
use super::literal::{Ident, Plain, RustStr, RustType, TomlStr, TsType};
pub use super::parts::*;
use super::typescript::{self, TypeScript};
use super::BRAID_VERSION;
use crate::manifest::workflow::{SegmentInput, Workflow};

/// What the one generated-file header says (`templates/partials/header.hbs`).
#[derive(Debug, Clone, Serialize)]
pub struct Header {
    pub braid_version: &'static str,
    /// The manifest name (validated: a letter, then letters, digits, `_`, `-`).
    pub workflow: Plain,
}

/// The plan of one generated crate.
#[derive(Debug, Clone, Serialize)]
pub struct CratePlan {
    pub header: Header,
    /// `wf_<name>`.
    pub crate_name: Ident,
    pub version: TomlStr,
    pub name_lit: RustStr,
    pub id_lit: RustStr,
    pub description: Description,
    /// `#![no_std]` (every operation allows it).
    pub no_std: bool,
    /// The wasm-bindgen interface (every operation allows it).
    pub wasm: bool,
    pub segment_count: usize,
    /// The types of external inputs, sorted, without repeats: the variants
    /// of `Input`.
    pub input_types: Vec<ValueType>,
    pub output: ValueType,
    /// External inputs of the whole workflow, in the order `run` takes them.
    pub external_inputs: Vec<ExternalInput>,
    /// When every external input is a `Bytes` or a `String` (and there is
    /// one at least), their kinds in order (`b`, `s`): the name of the
    /// typed entry the glue's fast path of `run` and `runSync` calls
    /// (`__braid_run_typed_<kinds>`: see braid `package/glue.rs`).
    pub typed_run: Option<Plain>,
    /// The same for a new `Workflow`'s first `next`, when one segment takes
    /// every external input and they are all `Bytes` or `String`: that
    /// segment's kinds, in the order `next` takes them
    /// (`__braid_next_fresh_typed_<kinds>`, a function the glue hides).
    pub typed_next: Option<TypedNext>,
    /// The output is a `Cid`: `run`'s typed entry returns its text, which
    /// wasm-bindgen's glue decodes, rather than a JS string made by a call
    /// from Wasm into JS (0.06 us at 64 B). A CID's text is short: no
    /// engine refuses it.
    pub output_cid: bool,
    pub segments: Vec<SegmentPlan>,
    /// The segments that take external input, each with the cursors from
    /// which it is the next one to: what `next` expects.
    pub next_inputs: Vec<NextInputs>,
    /// Outputs kept between `next` calls: those of every segment a later
    /// one uses (all but the last).
    pub memos: Vec<Memo>,
    /// The operations, sorted by name: the crate's dependencies.
    pub operations: Vec<Dependency>,
    /// `vendor/`'s directory of braid-support (`vendor::dir_name`).
    pub support_dir: Plain,
    /// The streaming entry, when the workflow has one (see [`StreamPlan`]).
    pub stream: Option<StreamPlan>,
    /// The value types of one's own at the boundary (and in their fields),
    /// re-exported at the crate root for Rust callers, as TypeScript
    /// declares them for JS ones (the validator allows one per name).
    pub value_types: Vec<RustType>,
    pub typescript: TypeScript,
    /// The component-model world, for a workflow that builds for Wasm:
    /// `Ok`, or why it has none.
    pub component: Option<Result<ComponentPlan, String>>,
}

/// `stream()`: a workflow whose one external input is `Bytes`, fed to a
/// first step with an incremental form (`"stream": true`), takes that input
/// in chunks; the rest runs as in `run` when it is finished.
#[derive(Debug, Clone, Serialize)]
pub struct StreamPlan {
    /// The first step's crate (its `OperationStream`).
    #[serde(rename = "crate")]
    pub krate: Ident,
}

/// The streaming entry of `w`, if it has one.
fn stream_plan(w: &Workflow) -> Option<StreamPlan> {
    streaming(w).ok()
}

/// The streaming entry of `w`: one external input, `Bytes`, into segment
/// 0's first step, which streams. Otherwise why not, in words that end a
/// sentence starting "workflow X cannot stream: ".
pub fn streaming(w: &Workflow) -> Result<StreamPlan, String> {
    let inputs = w.external_inputs();
    match inputs.as_slice() {
        [TypeName::Bytes] => {}
        [ty] => return Err(format!("its external input is {ty}, and only a Bytes input can be given in chunks")),
        _ => return Err(format!("it takes {} external inputs, and streaming takes exactly one (Bytes)", inputs.len())),
    }
    let (first, step) = w.segments.first().and_then(|s| Some((s, s.steps.first()?))).ok_or("it has no step")?;
    if !matches!(first.inputs.as_slice(), [SegmentInput::External { slot: 0, .. }]) {
        return Err("its Bytes input does not go to the first step alone".into());
    }
    if w.uses_of_input(0) > 1 {
        return Err("its Bytes input also goes to a later segment, which needs it whole".into());
    }
    if !step.operation.manifest.stream {
        return Err(format!(
            "its first step, {}, has no incremental form (its manifest does not say \"stream\": true; \
             an operation offers one with #[operation(stream = T)])",
            step.operation.name()
        ));
    }
    Ok(StreamPlan { krate: Ident::new(step.operation.name()) })
}

/// The plan of the crate for `w`.
pub fn plan(w: &Workflow) -> CratePlan {
    let name = w.manifest.name.as_str();
    let last = w.segments.len() - 1;

    // Memo liveness: the last segment that uses each segment's output, and
    // the first and last that take each external input.
    let mut last_use = vec![0usize; w.segments.len()];
    let mut input_uses: Vec<(usize, usize)> = vec![(usize::MAX, 0); w.external_inputs().len()];
    for (i, s) in w.segments.iter().enumerate() {
        for input in &s.inputs {
            match input {
                SegmentInput::Segment { index, .. } => last_use[*index] = last_use[*index].max(i),
                SegmentInput::External { slot, .. } => {
                    let (first, last) = &mut input_uses[*slot];
                    *first = (*first).min(i);
                    *last = i;
                }
            }
        }
    }

    let place = |slot: usize| match w.input_name(slot) {
        Some(input) => RustStr::new(&format!("{name} input {slot} ({input})")),
        None => RustStr::new(&format!("{name} input {slot}")),
    };
    let mut segments = Vec::with_capacity(w.segments.len());
    let mut external_inputs: Vec<Option<ExternalInput>> = vec![None; input_uses.len()];
    for (i, segment) in w.segments.iter().enumerate() {
        let mut inputs = Vec::new();
        let mut externals: Vec<ExternalInput> = Vec::new();
        for (position, input) in segment.inputs.iter().enumerate() {
            let arg = match input {
                SegmentInput::External { slot, ty } => {
                    let given_here = input_uses[*slot].0 == i;
                    if given_here && !externals.iter().any(|e| e.slot == *slot) {
                        let ty = ValueType::new(ty);
                        let (param, ts) = match w.input_name(*slot) {
                            Some(input) => {
                                let label = Ident::new(input);
                                let ts = TsType::labelled(&label, &ty.ts);
                                (label, ts)
                            }
                            None => (Ident::new(&format!("input{slot}")), ty.ts.clone()),
                        };
                        let external = ExternalInput {
                            slot: *slot,
                            position: externals.len(),
                            ty,
                            param,
                            ts,
                            place_lit: place(*slot),
                        };
                        externals.push(external.clone());
                        external_inputs[*slot] = Some(external);
                    }
                    Arg::External { slot: *slot, position, kept: !given_here }
                }
                SegmentInput::Segment { index, .. } => Arg::Memo { segment: *index, position },
            };
            inputs.push(Param { position, ty: ValueType::new(input.ty()), arg });
        }
        let keeps = externals.iter().map(|e| e.slot).filter(|&slot| input_uses[slot].1 > i).collect();
        let steps = segment
            .steps
            .iter()
            .enumerate()
            .map(|(j, step)| {
                let direct: Vec<Arg> = match j {
                    0 => inputs.iter().map(|p| p.arg.clone()).collect(),
                    _ => vec![Arg::Previous { step: j - 1, borrowed: segment.steps[j - 1].operation.manifest.borrows }],
                };
                let args = match step.operation.manifest.is_flow_control() {
                    true => vec![Arg::Collect { items: direct }],
                    false => direct,
                };
                let config = step
                    .config
                    .iter()
                    .map(|(k, v)| ConfigPair { key: RustStr::new(k), value: RustStr::new(v) })
                    .collect();
                let borrows = step.operation.manifest.borrows;
                StepPlan { index: j, krate: Ident::new(step.operation.name()), args, borrows, config }
            })
            .collect();
        segments.push(SegmentPlan {
            index: i,
            inputs,
            externals,
            keeps,
            steps,
            output: ValueType::new(&segment.output),
            last: i == last,
            drops: (0..i).filter(|&k| last_use[k] == i).collect(),
        });
    }

    let mut next_inputs: Vec<NextInputs> = Vec::new();
    for s in segments.iter().filter(|s| !s.externals.is_empty()) {
        next_inputs.push(NextInputs {
            from: next_inputs.last().map_or(0, |n| n.segment + 1),
            segment: s.index,
            types: s.externals.iter().map(|e| e.ty.name_lit.clone()).collect(),
        });
    }

    let external_inputs: Vec<ExternalInput> =
        external_inputs.into_iter().map(|e| e.expect("every slot is given to a segment")).collect();
    let mut input_types: Vec<&TypeName> = w.external_inputs();
    input_types.sort();
    input_types.dedup();

    let outputs = w.segments[..last].iter().enumerate().map(|(i, s)| Memo {
        field: Ident::new(&format!("s{i}")),
        after: i,
        ty: ValueType::new(&s.output),
        last_use: last_use[i],
    });
    let kept_inputs = external_inputs.iter().filter(|e| input_uses[e.slot].1 > input_uses[e.slot].0).map(|e| Memo {
        field: Ident::new(&format!("i{}", e.slot)),
        after: input_uses[e.slot].0,
        ty: e.ty.clone(),
        last_use: input_uses[e.slot].1,
    });
    let memos = outputs.chain(kept_inputs).collect();

    let operations = w
        .crates
        .iter()
        .map(|op| Dependency {
            name: Ident::new(op.name()),
            dir: Plain::new(&crate::vendor::dir_name(op.name(), op.source_id()))
                .expect("crate names and content ids are plain"),
            features: w.value_features(op.name()).iter().map(|f| TomlStr::new(f)).collect(),
            std: op.manifest.features.iter().any(|f| f == "std"),
        })
        .collect();

    let description = match w.manifest.description.is_empty() {
        true => format!("Workflow `{name}`."),
        false => w.manifest.description.clone(),
    };

    let mut boundary: Vec<&TypeName> = w.external_inputs();
    boundary.push(&w.segments[last].output);
    let typescript = typescript::plan(&segments, &external_inputs, &boundary, &w.crates);
    let value_types =
        crate::registry::named_types(&w.crates, &boundary).into_keys().map(|t| RustType::new(&t)).collect();
    let stream = stream_plan(w);
    let component =
        w.supports(Platform::Wasm).then(|| component::plan(w, &external_inputs, &boundary, stream.is_some()));

    CratePlan {
        header: Header {
            braid_version: BRAID_VERSION,
            workflow: Plain::new(name).expect("a validated workflow name is plain"),
        },
        crate_name: Ident::new(&super::crate_name(name)),
        version: TomlStr::new(&w.manifest.version),
        name_lit: RustStr::new(name),
        id_lit: RustStr::new(&w.id),
        description: Description { rust: RustStr::new(&description), toml: TomlStr::new(&description) },
        no_std: w.supports(Platform::Nostd),
        wasm: w.supports(Platform::Wasm),
        segment_count: w.segments.len(),
        input_types: input_types.into_iter().map(ValueType::new).collect(),
        output_cid: *w.output() == TypeName::Cid,
        output: output_type(w),
        typed_run: w.supports(Platform::Wasm).then(|| typed_kinds(&w.external_inputs())).flatten(),
        typed_next: w.supports(Platform::Wasm).then(|| typed_next(w, &segments)).flatten(),
        external_inputs,
        segments,
        next_inputs,
        memos,
        operations,
        support_dir: Plain::new(&support_dir()).expect("crate names and content ids are plain"),
        stream,
        value_types,
        typescript,
        component,
    }
}

/// `vendor/`'s directory of braid-support.
fn support_dir() -> String {
    crate::vendor::runtime_crate("braid-support").map(|c| c.dir.clone()).unwrap_or_else(|_| "braid-support".into())
}

/// The workflow's output type. When `op_collect` makes it, TypeScript
/// knows its length: `[string, string]` rather than `Array<string>` (the
/// JS value is the same Array; Rust keeps `Vec<T>`, which has no length
/// in its type). Only there: an operation after `op_collect` may change
/// the length.
/// `b` for each `Bytes` and `s` for each `String` of `inputs`, in order;
/// `None` when there is none or any other type, which the glue cannot check
/// without running the caller's code.
fn typed_kinds(inputs: &[&TypeName]) -> Option<Plain> {
    let kinds = inputs
        .iter()
        .map(|ty| match ty {
            TypeName::Bytes => Some('b'),
            TypeName::String => Some('s'),
            _ => None,
        })
        .collect::<Option<String>>()?;
    (!kinds.is_empty()).then(|| Plain::new(&kinds).expect("letters are plain"))
}

/// [`CratePlan::typed_next`]: the one segment taking external input, if it
/// takes them all and each is a `Bytes` or a `String`.
fn typed_next(w: &Workflow, segments: &[SegmentPlan]) -> Option<TypedNext> {
    let inputs = w.external_inputs();
    let mut taking = segments.iter().filter(|s| !s.externals.is_empty());
    let segment = taking.next().filter(|s| s.externals.len() == inputs.len())?;
    if taking.next().is_some() {
        return None;
    }
    let types: Vec<&TypeName> = segment.externals.iter().map(|e| inputs[e.slot]).collect();
    Some(TypedNext { segment: segment.index, kinds: typed_kinds(&types)?, externals: segment.externals.clone() })
}

fn output_type(w: &Workflow) -> ValueType {
    let mut output = ValueType::new(w.output());
    let last = w.segments.last().and_then(|s| s.steps.last());
    if let (Some(step), TypeName::Vec(item)) = (last, w.output()) {
        if step.operation.name() == "op_collect" && step.inputs.iter().all(|t| t == item.as_ref()) {
            output.ts = TsType::tuple(&TsType::new(item), step.inputs.len());
        }
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::validate;
    use crate::Registry;

    fn workflow(name: &str) -> Workflow {
        let path = format!("{}/../../workflows/{name}.json", env!("CARGO_MANIFEST_DIR"));
        validate(&std::fs::read_to_string(path).unwrap(), &Registry::builtin()).unwrap()
    }

    #[test]
    fn arguments_and_liveness() {
        let p = plan(&workflow("dual_cid_of_text"));
        // Segment 0's output feeds segments 1 and 2; theirs feed segment 3.
        let lives: Vec<(usize, usize)> = p.memos.iter().map(|m| (m.after, m.last_use)).collect();
        assert_eq!(lives, [(0, 2), (1, 3), (2, 3)]);
        let drops: Vec<&[usize]> = p.segments.iter().map(|s| s.drops.as_slice()).collect();
        assert_eq!(drops, [&[][..], &[], &[0], &[1, 2]]);
        let s3 = &p.segments[3];
        assert!(matches!(s3.inputs[1].arg, Arg::Memo { segment: 2, position: 1 }));
        // op_collect takes the list of the segment's inputs.
        let Arg::Collect { items } = &s3.steps[0].args[0] else { panic!("{:?}", s3.steps[0].args) };
        assert!(matches!(items[..], [Arg::Memo { segment: 1, .. }, Arg::Memo { segment: 2, .. }]));
        let s1 = &p.segments[1];
        assert!(matches!(s1.steps[1].args[..], [Arg::Previous { step: 0, borrowed: false }]));
        assert_eq!(p.external_inputs.len(), 1);
        // Only segment 0 takes input: from any later cursor, none does.
        let next: Vec<(usize, usize)> = p.next_inputs.iter().map(|n| (n.from, n.segment)).collect();
        assert_eq!(next, [(0, 0)]);
        assert!(matches!(p.segments[0].inputs[0].arg, Arg::External { slot: 0, position: 0, kept: false }));
    }

    #[test]
    fn inputs_of_several_calls() {
        let p = plan(&workflow("salted_cid"));
        let slots: Vec<(usize, usize, usize)> =
            p.segments.iter().flat_map(|s| s.externals.iter().map(|e| (s.index, e.slot, e.position))).collect();
        assert_eq!(slots, [(0, 0, 0), (1, 1, 0)]);
        let variants: Vec<&Ident> = p.input_types.iter().map(|t| &t.variant).collect();
        assert_eq!(variants, [&Ident::new("Bytes"), &Ident::new("String")]);
        assert_eq!(p.typescript.next_inputs.len(), 2);
        let next: Vec<(usize, usize)> = p.next_inputs.iter().map(|n| (n.from, n.segment)).collect();
        assert_eq!(next, [(0, 0), (1, 1)]);
        assert_eq!(p.typescript.run_inputs.len(), 2);
        // op_collect after a memo and an external input.
        let Arg::Collect { items } = &p.segments[1].steps[0].args[0] else { panic!() };
        assert!(matches!(
            items[..],
            [Arg::Memo { segment: 0, position: 0 }, Arg::External { slot: 1, position: 1, kept: false }]
        ));
        assert_eq!(p.operations.iter().filter(|d| d.std).count(), p.operations.len());
    }

    #[test]
    fn streaming_needs_one_bytes_input_into_a_step_that_streams() {
        assert_eq!(streaming(&workflow("cidv1_from_bytes")).unwrap().krate, Ident::new("op_multihash"));
        assert!(plan(&workflow("cidv1_sha2_256")).stream.is_some());
        let why = |name: &str| streaming(&workflow(name)).unwrap_err();
        assert_eq!(why("salted_cid"), "it takes 2 external inputs, and streaming takes exactly one (Bytes)");
        assert_eq!(
            why("hex_sha256_of_text"),
            "its external input is String, and only a Bytes input can be given in chunks"
        );
        assert_eq!(why("photo_proof"), "its Bytes input also goes to a later segment, which needs it whole");
        assert!(
            why("photo_metadata").starts_with("its first step, op_exif, has no incremental form"),
            "{}",
            why("photo_metadata")
        );
        assert!(plan(&workflow("photo_proof")).stream.is_none());
    }

    #[test]
    fn nested_list_types_get_their_own_variant() {
        let ty = TypeName::Vec(Box::new(TypeName::Vec(Box::new(TypeName::Cid))));
        assert_eq!(ValueType::new(&ty).variant, Ident::new("VecVecCid"));
        assert_eq!(Plain::new("Vec<Vec<Cid>>"), Some(ValueType::new(&ty).name));
    }
}
