// A workflow run one step at a time, each step by its operation's own
// package (`braid build --targets steps` in the page, `braid op-package` in
// the Node test: one build per operation, every config value compiled in
// and chosen per call), for previews of every step's output
// without a fused build of the workflow. The values between steps are the
// JS values the packages give and take, which are the values the fused
// crate passes by reference (the packages' conversions round-trip them):
// js/test/preview.test.mjs checks that the last step's output equals the
// fused build's on every example workflow.
//
// Pure: it runs nothing itself. `execute(step, args, entry)` runs one step,
// `args` being its inputs (for a flow-control operation, whose package takes
// its inputs as one list, `[inputs]`), `entry` its item of the list
// `previewSteps` made (with whatever the caller added to it).

/**
 * The steps of `manifest` in the order a run takes them, each with its
 * JSON pointer in the manifest (`/segments/1/sequence/0`) and where each of
 * its inputs comes from: `{ external: k }` (the k-th of `run`'s inputs),
 * `{ step: i }` (the output of step i of this list).
 *
 * External inputs: a name is the position of that name in
 * `manifest.inputs`; each `-1` is the next of `run`'s inputs, in the order
 * the segments list them. A segment's index names its last step.
 */
export function previewSteps(manifest) {
  const names = manifest.inputs ?? [];
  const steps = [];
  const lastOf = [];
  let nextExternal = 0;
  manifest.segments.forEach((segment, s) => {
    const sources = segment.inputs.map((input) => {
      if (typeof input === 'string') return { external: names.indexOf(input) };
      if (input === -1) return { external: nextExternal++ };
      return { step: lastOf[input] };
    });
    segment.sequence.forEach((step, j) => {
      steps.push({
        pointer: `/segments/${s}/sequence/${j}`,
        step,
        inputs: j === 0 ? sources : [{ step: steps.length - 1 }],
      });
    });
    lastOf[s] = steps.length - 1;
  });
  return steps;
}

/**
 * Runs `steps` (from {@link previewSteps}) on `externals` (what `run` would
 * take): for each step, `{ value }`, `{ error }` (its message), or
 * `{ skipped }` (the pointer of the step whose failure it needed). A step
 * is flow-control when `isFlow(step, entry)` says so.
 */
export async function runPreview(steps, externals, execute, isFlow = () => false) {
  const results = [];
  for (const entry of steps) {
    const { pointer, step, inputs } = entry;
    const failed = inputs.map((source) => (source.step === undefined ? undefined : results[source.step])).find((r) => r && !('value' in r));
    if (failed) {
      results.push({ pointer, skipped: failed.skipped ?? failed.pointer });
      continue;
    }
    const values = inputs.map((source) => (source.step === undefined ? externals[source.external] : results[source.step].value));
    try {
      results.push({ pointer, value: await execute(step, isFlow(step, entry) ? [values] : values, entry) });
    } catch (e) {
      results.push({ pointer, error: String(e?.message ?? e) });
    }
  }
  return results;
}
