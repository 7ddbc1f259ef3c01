//! Typing one segment: its inputs, then each step's inputs against the
//! previous step's output (flow-control generics bound as they are met), and
//! the segment's output.

use braid_schema::TypeName;

use super::{nesting, Checker, Resolved, Source};
use crate::diagnostic::Diagnostic;
use crate::manifest::workflow::{ResolvedSegment, ResolvedStep, SegmentInput};
use crate::manifest::MAX_TYPE_NESTING;

impl Checker<'_> {
    pub(super) fn type_segment(
        &mut self,
        i: usize,
        inputs: &[Option<(Source, Option<TypeName>)>],
        ops: &[Option<Resolved>],
    ) -> Option<ResolvedSegment> {
        let pointer = format!("/segments/{i}");
        let mut steps = Vec::new();
        let mut previous: Option<TypeName> = None;
        let mut segment_inputs = Vec::new();
        for (j, entry) in ops.iter().enumerate() {
            let p = format!("{pointer}/sequence/{j}");
            let Some((op, config)) = entry else { return None };
            let declared: Vec<TypeName> = op.manifest.inputs.clone();
            // Every resolved step is an operation (`resolve`), with an output.
            let output = op.manifest.output.clone()?;
            let flow = op.manifest.is_flow_control();
            let name = op.name();
            let (step_inputs, out) = if j == 0 {
                // The segment's inputs feed the first operation.
                if inputs.iter().any(Option::is_none) {
                    return None;
                }
                let given: Vec<&(Source, Option<TypeName>)> = inputs.iter().flatten().collect();
                if flow {
                    if given.is_empty() {
                        return None;
                    }
                    let known: Vec<(usize, &TypeName)> =
                        given.iter().enumerate().filter_map(|(k, (_, t))| t.as_ref().map(|t| (k, t))).collect();
                    let Some((_, t)) = known.first() else {
                        if given.iter().any(|(n, _)| matches!(n, Source::Segment(_))) {
                            return None; // an upstream segment failed; reported there
                        }
                        self.error(
                            Diagnostic::new(format!("{pointer}/inputs"), format!("cannot tell the type of {name}'s external inputs"))
                                .hint(format!("{name} takes inputs of one type T; give at least one input from an earlier segment so T is known")),
                        );
                        return None;
                    };
                    let t = (*t).clone();
                    for (k, other) in &known {
                        if **other != t {
                            self.error(
                                Diagnostic::new(
                                    format!("{pointer}/inputs/{k}"),
                                    format!("{name} takes inputs of one type"),
                                )
                                .expected(t.to_string())
                                .found(format!("{other} ({})", given[*k].0)),
                            );
                            return None;
                        }
                    }
                    let param = declared[0].to_string();
                    let step_inputs = vec![t.clone(); given.len()];
                    (step_inputs, output.substitute(&param, &t))
                } else {
                    if given.len() != declared.len() {
                        self.error(
                            Diagnostic::new(
                                format!("{pointer}/inputs"),
                                format!("{name} takes {} input(s)", declared.len()),
                            )
                            .expected(format!("{} input(s): {}", declared.len(), op.manifest.input_list()))
                            .found(format!("{} input(s)", given.len())),
                        );
                        return None;
                    }
                    for (k, ((n, t), want)) in given.iter().zip(&declared).enumerate() {
                        if let Some(t) = t {
                            if t != want {
                                let input = match op.manifest.input_name(k) {
                                    Some(input) => format!("input {k} (`{input}`)"),
                                    None => format!("input {k}"),
                                };
                                let d = Diagnostic::new(
                                    format!("{pointer}/inputs/{k}"),
                                    format!("type mismatch: {name} {input} is {want}"),
                                )
                                .expected(want.to_string())
                                .found(format!("{t} ({n})"));
                                self.error(self.convert_hint(d, t, want));
                                return None;
                            }
                        } else if matches!(n, Source::Segment(_)) {
                            return None;
                        }
                    }
                    (declared.clone(), output)
                }
            } else {
                let prev = previous.clone()?;
                if flow {
                    let param = declared[0].to_string();
                    (vec![prev.clone()], output.substitute(&param, &prev))
                } else if declared.len() != 1 {
                    self.error(
                        Diagnostic::new(
                            &p,
                            format!("{name} takes {} inputs but only follows one operation", declared.len()),
                        )
                        .expected("an operation of one input here")
                        .hint(format!(
                            "start a new segment whose \"inputs\" give {name} its {} inputs",
                            declared.len()
                        )),
                    );
                    return None;
                } else if declared[0] != prev {
                    let before = steps.last().map_or("the previous operation", |s: &ResolvedStep| s.operation.name());
                    let d = Diagnostic::new(
                        &p,
                        format!("type mismatch: {name} takes {}, {before} outputs {prev}", declared[0]),
                    )
                    .expected(declared[0].to_string())
                    .found(prev.to_string());
                    self.error(self.convert_hint(d, &prev, &declared[0]));
                    return None;
                } else {
                    (declared.clone(), output)
                }
            };
            if j == 0 {
                for ((source, _), ty) in inputs.iter().flatten().zip(&step_inputs) {
                    let ty = ty.clone();
                    segment_inputs.push(match *source {
                        Source::External(slot) => SegmentInput::External { slot, ty },
                        Source::Segment(index) => SegmentInput::Segment { index, ty },
                    });
                }
            }
            if nesting(&out) > MAX_TYPE_NESTING {
                self.error(
                    Diagnostic::new(&p, format!("{name} would output a type nested too deeply"))
                        .expected(format!("at most {MAX_TYPE_NESTING} levels of Vec"))
                        .found(format!("{} levels", nesting(&out)))
                        .hint("collect fewer times in a row"),
                );
                return None;
            }
            previous = Some(out.clone());
            steps.push(ResolvedStep {
                operation: op.clone(),
                config: config.clone(),
                inputs: step_inputs,
                output: out,
            });
        }
        Some(ResolvedSegment { inputs: segment_inputs, output: previous?, steps })
    }
}
