//! Uses generated workflow crates through their typed native API, as a Rust
//! dependency would: `run`, `next` step by step, `next_sync`, errors,
//! suspend and resume.

#[cfg(test)]
mod tests {
    use wf_salted_cid as salted;
    use wf_salted_cid::braid_support::{Cid, Error};

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i.wrapping_mul(31).wrapping_add(7) & 0xff) as u8).collect()
    }

    /// Expected outputs, from workflows/vectors.json (reference implementation).
    fn expected(workflow: &str) -> serde_like::Value {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../../workflows/vectors.json")).unwrap();
        serde_like::find_output(&text, workflow)
    }

    mod serde_like {
        //! Just enough JSON reading for the vectors (no extra dependency).
        pub type Value = String;
        pub fn find_output(text: &str, workflow: &str) -> Value {
            let at = text.find(&format!("\"workflow\": \"{workflow}\"")).expect("workflow in vectors");
            let rest = &text[at..];
            let out = rest.find("\"output\": ").unwrap() + "\"output\": ".len();
            let rest = &rest[out..];
            let end = if rest.starts_with('[') { rest.find(']').unwrap() + 1 } else { rest.find('\n').unwrap() };
            rest[..end].trim_end_matches(',').replace(['\n', ' '], "")
        }
    }

    #[test]
    fn run_with_typed_inputs() {
        let cid: Cid = salted::run_sync("salt:".to_string(), pattern(1000)).unwrap();
        assert_eq!(format!("\"{cid}\""), expected("salted_cid"));
    }

    #[test]
    fn next_step_by_step_with_errors_that_say_what_was_expected() {
        let mut wf = salted::Workflow::new();
        assert_eq!(wf.expected_inputs(), ["String"]);
        let err = wf.next_sync(vec![salted::Input::from(vec![1u8])]).unwrap_err();
        assert!(matches!(err, Error::Type { .. }), "{err}");
        assert_eq!(err.to_string(), "salted_cid segment 0 input 0: expected String, found Bytes");
        let err = wf.next_sync(vec![]).unwrap_err();
        assert!(err.to_string().contains("expected 1: [String]"), "{err}");
        let step = wf.next_sync(vec!["salt:".to_string().into()]).unwrap();
        assert!(!step.done && step.output.is_none());
        assert!(step.segment_time.is_some() && step.total_time.is_some());
        assert_eq!(wf.expected_inputs(), ["Bytes"]);
        let step = wf.next_sync(vec![pattern(1000).into()]).unwrap();
        assert!(step.done);
        assert_eq!(format!("\"{}\"", step.output.unwrap()), expected("salted_cid"));
        assert!(wf.is_done());
        let err = wf.next_sync(vec![]).unwrap_err();
        assert!(matches!(err, Error::Done { .. }));
    }

    #[test]
    fn async_api_matches_the_sync_one() {
        let a = salted::braid_support::now_or_never(salted::run("s".into(), pattern(16384))).unwrap().unwrap();
        let b = salted::run_sync("s".into(), pattern(16384)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn suspend_and_resume_natively_and_hand_a_state_to_wasm() {
        let mut wf = salted::Workflow::new();
        wf.next_sync(vec!["salt:".to_string().into()]).unwrap();
        let state = wf.suspend().unwrap();
        // The Node tests resume this state in the Wasm build (another target).
        let out = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../../target/wf/salted_cid/native-state.bin");
        std::fs::write(out, &state).unwrap();
        let mut resumed = salted::Workflow::resume(&state).unwrap();
        let step = resumed.next_sync(vec![pattern(1000).into()]).unwrap();
        assert_eq!(format!("\"{}\"", step.output.unwrap()), expected("salted_cid"));
        // Not a state of this workflow, or garbage: errors, not panics.
        let other = salted::braid_support::codec::encode(&("bafkr4iother".to_string(), Vec::<u8>::new())).unwrap();
        let err = salted::Workflow::resume(&other).err().unwrap();
        assert!(err.to_string().contains("the state belongs to workflow bafkr4iother"), "{err}");
        assert!(salted::Workflow::resume(&state[..state.len() - 1]).is_err());
        assert!(salted::Workflow::resume(&[]).is_err());
    }
}
