//! The runtime every generated workflow crate shares: the [`Step`] a `next`
//! call gives, the [`State`] kept between calls (cursor, total time and the
//! generated struct of memoised segment outputs), memo access, the
//! suspend/resume envelope with its checks, the input and arity errors,
//! and (feature `wasm`, [`js`]) the JS side of `next`, `suspend` and
//! `resume`. A generated `lib.rs` keeps only what is its own: its types,
//! configs, segment functions and the `match` that runs them.
//!
//! Nothing here is on the hot path of `run` (segment functions and their
//! configs are generated); what `next` calls is generic (monomorphised in
//! the generated crate, no dynamic dispatch) or `#[inline]`, and allocates
//! only on error paths.

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::future::Future;
use core::time::Duration;

use crate::codec::{self, Decode, Encode};
use crate::text::text;
use crate::{clock, now_or_never, Error};

#[cfg(feature = "wasm")]
pub mod js;

/// What one call of a workflow's `next` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step<O> {
    /// Whether the workflow has finished.
    pub done: bool,
    /// The output, when done.
    pub output: Option<O>,
    /// Time of the last segment this call ran, where a clock exists.
    pub segment_time: Option<Duration>,
    /// Time spent in all segments so far, where a clock exists.
    pub total_time: Option<Duration>,
}

/// What the runtime knows of a generated workflow (constants of its crate).
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The manifest name, for messages.
    pub name: &'static str,
    /// The workflow id (CIDv1 of the manifest's canonical JSON): a
    /// suspended state carries it, and `resume` refuses another.
    pub id: &'static str,
    /// Number of segments.
    pub segments: usize,
}

/// The part of a [`State`] that is a workflow's own: a generated struct
/// with one `Option<Rc<T>>` per segment whose output a later segment uses
/// (encoded by `suspend` after the cursor and the total time), which also
/// tells the runtime about its workflow: [`Spec`], which inputs `next`
/// expects, which memos must be present.
pub trait Memos: Default + Encode + Decode<()> {
    /// The workflow these memos belong to.
    const SPEC: Spec;

    /// The first segment at or after `cursor` that takes external input,
    /// with the manifest type names of those inputs; `None` if no segment
    /// left does. Generated as a `match`, which folds away where the cursor
    /// is known.
    fn next_inputs(cursor: usize) -> Option<(usize, &'static [&'static str])>;

    /// Whether every memoised output a segment at or after `cursor` uses is
    /// present (checked on `resume`). The default suits a workflow with no
    /// memos.
    fn complete_at(&self, cursor: usize) -> bool {
        let _ = cursor;
        true
    }
}

/// The state of a workflow between `next` calls: which segment runs next,
/// the time spent so far and the memoised outputs later segments still
/// need.
#[derive(Debug, Clone, Default)]
pub struct State<M> {
    cursor: u32,
    total_nanos: u64,
    /// The memoised segment outputs (generated code stores and reads them).
    pub memos: M,
}

impl<M: Memos> State<M> {
    /// The state of a workflow whose segments have all run: what a JS
    /// `Workflow` that finished without a Wasm object of its own (see
    /// braid `package/fast_run.rs`) is made of when it is used again.
    pub fn finished() -> Self {
        Self { cursor: u32::try_from(M::SPEC.segments).unwrap_or(u32::MAX), total_nanos: 0, memos: M::default() }
    }

    /// The segment that runs next.
    #[inline]
    pub fn cursor(&self) -> usize {
        self.cursor as usize
    }

    /// Whether every segment has run.
    #[inline]
    pub fn is_done(&self) -> bool {
        self.cursor() >= M::SPEC.segments
    }

    /// `Ok` while segments are left to run; [`Error::Done`] once done.
    #[inline]
    pub fn running(&self) -> Result<(), Error> {
        match self.is_done() {
            false => Ok(()),
            true => Err(done(M::SPEC.name)),
        }
    }

    /// The first segment at or after the cursor that takes external input,
    /// with the manifest type names of its inputs.
    #[inline]
    fn next_inputs(&self) -> Option<(usize, &'static [&'static str])> {
        M::next_inputs(self.cursor())
    }

    /// The first segment at or after the cursor that takes external input.
    #[inline]
    pub fn next_external_segment(&self) -> Option<usize> {
        self.next_inputs().map(|(segment, _)| segment)
    }

    /// Manifest type names of the inputs the next `next` call takes (empty
    /// when none, or when done).
    #[inline]
    pub fn expected_inputs(&self) -> &'static [&'static str] {
        self.next_inputs().map_or(&[], |(_, types)| types)
    }

    /// Checks that `found` inputs are as many as the next segment that takes
    /// external input expects; gives that segment.
    #[inline]
    pub fn check_arity(&self, found: usize) -> Result<Option<usize>, Error> {
        let segment = self.next_external_segment();
        let expected = self.expected_inputs();
        if found != expected.len() {
            return Err(arity(M::SPEC.name, segment, expected, found));
        }
        Ok(segment)
    }

    /// Moves past the segment that started at `start` (a
    /// [`clock::now_nanos`] reading); returns its time.
    #[inline]
    pub fn advance(&mut self, start: Option<u64>) -> Option<u64> {
        let nanos = elapsed(start);
        self.total_nanos = self.total_nanos.saturating_add(nanos.unwrap_or(0));
        self.cursor += 1;
        nanos
    }

    /// The step of a `next` call that stopped for input: `start` is the
    /// clock reading of the segment that waits (`None` without a clock),
    /// `segment_nanos` the time of the last segment this call ran.
    #[inline]
    pub fn waiting<O>(&self, start: Option<u64>, segment_nanos: Option<u64>) -> Step<O> {
        self.step(None, start.is_some(), segment_nanos)
    }

    /// Moves past the last segment, which started at `start` and gave
    /// `output`; drops the memoised outputs (no segment needs them now).
    #[inline]
    pub fn finish<O>(&mut self, output: O, start: Option<u64>) -> Step<O> {
        let nanos = self.advance(start);
        self.memos = M::default();
        self.step(Some(output), start.is_some(), nanos)
    }

    #[inline]
    fn step<O>(&self, output: Option<O>, clock: bool, segment_nanos: Option<u64>) -> Step<O> {
        Step {
            done: output.is_some(),
            output,
            segment_time: segment_nanos.map(Duration::from_nanos),
            total_time: clock.then(|| Duration::from_nanos(self.total_nanos)),
        }
    }

    /// Encodes the state, to [`resume`](Self::resume) later, possibly in
    /// another process or on another target: `(workflow id, body)`, the id
    /// first so that a state of another workflow is recognised as such
    /// before its body is decoded. What `resume` would refuse (a finished
    /// workflow, a state over the codec's limits) is refused here, so every
    /// state given resumes.
    pub fn suspend(&self) -> Result<Vec<u8>, Error> {
        let body = codec::encode(&(self.cursor, self.total_nanos, &self.memos))?;
        let state = codec::encode(&(M::SPEC.id, body))?;
        Self::resume(&state)?;
        Ok(state)
    }

    /// The state [`suspend`](Self::suspend) encoded, or [`Error::BadState`]
    /// (or [`Error::Codec`]) saying why it cannot be continued from.
    pub fn resume(bytes: &[u8]) -> Result<Self, Error> {
        let spec = M::SPEC;
        let (id, body): (String, Vec<u8>) = codec::decode(bytes)?;
        if id != spec.id {
            let reason = text!("the state belongs to workflow ", id, ", not ", spec.id);
            return Err(Error::BadState { workflow: spec.name.into(), reason });
        }
        let (cursor, total_nanos, memos) = codec::decode(&body)?;
        let state = Self { cursor, total_nanos, memos };
        if state.is_done() || !state.memos.complete_at(state.cursor()) {
            let reason = "the state is inconsistent or already done".into();
            return Err(Error::BadState { workflow: spec.name.into(), reason });
        }
        Ok(state)
    }
}

/// The output of `segment`, memoised in `slot`; [`Error::BadState`] if it
/// is missing (which a checked state rules out).
#[inline]
pub fn memo<'a, T>(slot: &'a Option<Rc<T>>, workflow: &str, segment: usize) -> Result<&'a T, Error> {
    match slot {
        Some(value) => Ok(value),
        None => Err(missing(workflow, segment)),
    }
}

/// External input `input`, kept in `slot` for the later segments that take
/// it too; [`Error::BadState`] if it is missing (which a checked state rules
/// out).
#[inline]
pub fn kept_input<'a, T>(slot: &'a Option<Rc<T>>, workflow: &str, input: usize) -> Result<&'a T, Error> {
    match slot {
        Some(value) => Ok(value),
        None => {
            Err(Error::BadState { workflow: workflow.into(), reason: text!("external input ", input, " is missing") })
        }
    }
}

#[inline]
fn missing(workflow: &str, segment: usize) -> Error {
    Error::BadState { workflow: workflow.into(), reason: text!("the output of segment ", segment, " is missing") }
}

/// [`Error::Done`]: `next` on a finished workflow.
#[inline]
pub fn done(workflow: &str) -> Error {
    Error::Done { workflow: workflow.into() }
}

#[inline]
fn arity(workflow: &str, segment: Option<usize>, expected: &[&str], found: usize) -> Error {
    Error::Arity {
        operation: match segment {
            Some(s) => text!(workflow, " (segment ", s, ")"),
            None => text!(workflow, " (no segment left takes input)"),
        },
        expected: text!(expected.len(), ": [", expected.join(", "), "]"),
        found,
    }
}

/// [`Error::Type`] for external input `position` of `segment`: a value of
/// manifest type `found` (or none) where `expected` was.
#[inline]
pub fn input_mismatch(workflow: &str, segment: usize, position: usize, expected: &str, found: Option<&str>) -> Error {
    Error::Type {
        context: text!(workflow, " segment ", segment, " input ", position),
        expected: expected.into(),
        found: found.unwrap_or("nothing").into(),
    }
}

/// Drives a workflow's future without an async executor (operations do not
/// suspend; one that did gives [`Error::Pending`]).
#[inline]
pub fn sync<T>(workflow: &str, future: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    now_or_never(future).unwrap_or_else(|| Err(Error::Pending { operation: workflow.into() }))
}

/// Nanoseconds since `start`, if there is a clock.
#[inline]
fn elapsed(start: Option<u64>) -> Option<u64> {
    Some(clock::now_nanos()?.saturating_sub(start?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    /// A two-segment workflow whose segment 1 takes segment 0's output and
    /// a second external input.
    #[derive(Debug, Clone, Default, PartialEq)]
    struct Two(Option<Rc<Vec<u8>>>);

    impl Encode for Two {
        fn encode<E: crate::codec::bincode::enc::Encoder>(
            &self,
            e: &mut E,
        ) -> Result<(), crate::codec::bincode::error::EncodeError> {
            self.0.encode(e)
        }
    }

    impl<C> Decode<C> for Two {
        fn decode<D: crate::codec::bincode::de::Decoder<Context = C>>(
            d: &mut D,
        ) -> Result<Self, crate::codec::bincode::error::DecodeError> {
            Ok(Two(Decode::decode(d)?))
        }
    }

    impl Memos for Two {
        const SPEC: Spec = Spec { name: "two", id: "bafkr4itwo", segments: 2 };
        fn next_inputs(cursor: usize) -> Option<(usize, &'static [&'static str])> {
            match cursor {
                0 => Some((0, &["String"])),
                1 => Some((1, &["Bytes"])),
                _ => None,
            }
        }
        fn complete_at(&self, cursor: usize) -> bool {
            !(cursor == 1 && self.0.is_none())
        }
    }

    /// No memos, one segment.
    #[derive(Debug, Clone, Default)]
    struct One;

    impl Encode for One {
        fn encode<E: crate::codec::bincode::enc::Encoder>(
            &self,
            _: &mut E,
        ) -> Result<(), crate::codec::bincode::error::EncodeError> {
            Ok(())
        }
    }

    impl<C> Decode<C> for One {
        fn decode<D: crate::codec::bincode::de::Decoder<Context = C>>(
            _: &mut D,
        ) -> Result<Self, crate::codec::bincode::error::DecodeError> {
            Ok(One)
        }
    }

    impl Memos for One {
        const SPEC: Spec = Spec { name: "one", id: "bafkr4ione", segments: 1 };
        fn next_inputs(cursor: usize) -> Option<(usize, &'static [&'static str])> {
            (cursor == 0).then_some((0, &["Bytes"]))
        }
    }

    #[test]
    fn inputs_follow_the_cursor() {
        let mut state = State::<Two>::default();
        assert_eq!(state.expected_inputs(), ["String"]);
        assert_eq!(state.check_arity(1), Ok(Some(0)));
        assert_eq!(
            state.check_arity(2).unwrap_err().to_string(),
            "two (segment 0): expected 1: [String] input(s), found 2"
        );
        state.memos.0 = Some(Rc::new(vec![1]));
        state.advance(clock::now_nanos());
        assert_eq!((state.cursor(), state.next_external_segment()), (1, Some(1)));
        assert_eq!(state.expected_inputs(), ["Bytes"]);
        let step = state.finish(7u8, clock::now_nanos());
        assert!(step.done && step.output == Some(7));
        assert!(state.is_done() && state.memos.0.is_none(), "finishing drops the memos");
        assert_eq!(state.expected_inputs(), [] as [&str; 0]);
        assert_eq!(
            state.check_arity(1).unwrap_err().to_string(),
            "two (no segment left takes input): expected 0: [] input(s), found 1"
        );
        assert_eq!(state.running().unwrap_err(), Error::Done { workflow: "two".into() });
    }

    #[test]
    fn steps_report_time_where_a_clock_exists() {
        let mut state = State::<Two>::default();
        let start = clock::now_nanos();
        let nanos = state.advance(start);
        let waiting: Step<u8> = state.waiting(start, nanos);
        assert!(!waiting.done && waiting.output.is_none());
        assert_eq!(waiting.segment_time.is_some(), cfg!(feature = "std"));
        assert_eq!(waiting.total_time.is_some(), cfg!(feature = "std"));
        // Without a clock reading, no times.
        let step: Step<u8> = state.waiting(None, None);
        assert_eq!((step.segment_time, step.total_time), (None, None));
    }

    #[test]
    fn suspended_states_resume_and_bad_ones_are_refused() {
        let mut state = State::<Two>::default();
        state.memos.0 = Some(Rc::new(vec![1, 2, 3]));
        state.advance(Some(0));
        let bytes = state.suspend().unwrap();
        let resumed = State::<Two>::resume(&bytes).unwrap();
        assert_eq!((resumed.cursor(), &resumed.memos), (1, &state.memos));
        // The body is the cursor, the total time and the memos, in order.
        let (id, body): (String, Vec<u8>) = codec::decode(&bytes).unwrap();
        assert_eq!(id, "bafkr4itwo");
        let (cursor, _total, memo): (u32, u64, Option<Rc<Vec<u8>>>) = codec::decode(&body).unwrap();
        assert_eq!((cursor, memo.as_deref()), (1, Some(&vec![1, 2, 3])));

        // Another workflow's state.
        let other = codec::encode(&("bafkr4iother", codec::encode(&(0u32, 0u64)).unwrap())).unwrap();
        let err = State::<Two>::resume(&other).unwrap_err().to_string();
        assert_eq!(err, "two: cannot resume: the state belongs to workflow bafkr4iother, not bafkr4itwo");
        // A memo the cursor needs is missing; a cursor past the end.
        for body in [(1u32, 0u64, None::<Rc<Vec<u8>>>), (2, 0, None), (u32::MAX, 0, Some(Rc::new(vec![])))] {
            let bytes = codec::encode(&("bafkr4itwo", codec::encode(&body).unwrap())).unwrap();
            let err = State::<Two>::resume(&bytes).unwrap_err().to_string();
            assert_eq!(err, "two: cannot resume: the state is inconsistent or already done");
        }
        // Garbage, truncation, trailing bytes: codec errors, no panic.
        assert!(State::<Two>::resume(&[]).is_err());
        assert!(State::<Two>::resume(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(State::<Two>::resume(&longer).is_err());
    }

    #[test]
    fn a_finished_workflow_does_not_suspend() {
        let mut state = State::<One>::default();
        assert!(state.suspend().is_ok());
        state.finish((), None);
        let err = state.suspend().unwrap_err().to_string();
        assert_eq!(err, "one: cannot resume: the state is inconsistent or already done");
    }

    #[test]
    fn errors_say_what_was_expected() {
        assert_eq!(memo(&Some(Rc::new(5)), "w", 0), Ok(&5));
        assert_eq!(
            memo::<u8>(&None, "w", 3).unwrap_err().to_string(),
            "w: cannot resume: the output of segment 3 is missing"
        );
        assert_eq!(
            input_mismatch("w", 1, 0, "Bytes", Some("String")).to_string(),
            "w segment 1 input 0: expected Bytes, found String"
        );
        assert_eq!(
            input_mismatch("w", 0, 2, "Cid", None).to_string(),
            "w segment 0 input 2: expected Cid, found nothing"
        );
        assert_eq!(sync("w", async { Ok(1) }), Ok(1));
        let pending = sync::<()>("w", async { core::future::pending().await });
        assert_eq!(pending, Err(Error::Pending { operation: "w".into() }));
    }
}
