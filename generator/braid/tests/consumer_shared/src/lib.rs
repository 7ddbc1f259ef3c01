//! One named input given to two segments, through the typed native API.

#[cfg(test)]
mod tests {
    use wf_salted_text as wf;

    /// blake3 CIDv1 (raw, base32) of `ab` + [1, 2] + `ab`, from
    /// multiformats and @noble/hashes.
    const EXPECTED: &str = "bafkr4ihquo3pogd24s2njjrm63jigwfuczh5if4sb7e3acuviremcrlwse";

    #[test]
    fn run_takes_the_shared_input_once() {
        assert_eq!(wf::run_sync("ab".to_string(), vec![1, 2]).unwrap().as_str(), EXPECTED);
    }

    #[test]
    fn next_keeps_the_shared_input_for_the_later_segment_across_a_suspend() {
        let mut first = wf::Workflow::new();
        assert_eq!(first.expected_inputs(), ["String"]);
        let step = first.next_sync(vec!["ab".to_string().into()]).unwrap();
        assert!(!step.done);
        // The salt comes with the second call; segment 2 then takes the text
        // again from what the suspended state kept.
        let mut again = wf::Workflow::resume(&first.suspend().unwrap()).unwrap();
        assert_eq!(again.expected_inputs(), ["Bytes"]);
        let step = again.next_sync(vec![vec![1u8, 2].into()]).unwrap();
        assert!(step.done);
        assert_eq!(step.output.unwrap().as_str(), EXPECTED);
    }
}
