//! Uses `wf_thumbnail_hashes` natively: `op_image_decode::Image` (defined
//! by a crate the workflow's operations depend on, re-exported by the
//! generated crate) and `op_image_resize::Size` as external inputs, the
//! image flowing between three other crates' operations, through `run` and
//! through `next` with a suspend and resume while the thumbnail is held
//! (the second size comes in the second step).

#[cfg(test)]
mod tests {
    use wf_thumbnail_hashes::{run_sync, Image, Input, Size, Workflow};

    fn photo() -> Image {
        let path = format!("{}/../../../../workflows/samples/images/photo.png.rgba", env!("CARGO_MANIFEST_DIR"));
        let pixels = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Image { width: 64, height: 48, pixels }
    }

    fn hex16(s: &str) -> bool {
        s.len() == 16 && s.chars().all(|c| c.is_ascii_hexdigit())
    }

    #[test]
    fn run_gives_a_dhash_and_a_phash_of_the_thumbnail() {
        let hashes = run_sync(photo(), Size { width: 32, height: 24 }, Size { width: 32, height: 32 }).unwrap();
        assert_eq!(hashes.len(), 2);
        assert!(hashes.iter().all(|h| hex16(h)), "{hashes:?}");
        // Another thumbnail size of the same photo: close, not far.
        let other = run_sync(photo(), Size { width: 48, height: 36 }, Size { width: 32, height: 32 }).unwrap();
        let distance = |a: &str, b: &str| {
            (u64::from_str_radix(a, 16).unwrap() ^ u64::from_str_radix(b, 16).unwrap()).count_ones()
        };
        assert!(distance(&hashes[0], &other[0]) <= 12, "{hashes:?} {other:?}");
    }

    #[test]
    fn a_suspended_workflow_resumes_with_the_thumbnail_inside() {
        let second = Size { width: 32, height: 32 };
        let whole = run_sync(photo(), Size { width: 32, height: 24 }, second).unwrap();
        let mut wf = Workflow::new();
        assert_eq!(wf.expected_inputs(), ["op_image_decode::Image", "op_image_resize::Size"]);
        wf.next_sync(vec![Input::from(photo()), Input::from(Size { width: 32, height: 24 })]).unwrap();
        assert_eq!(wf.expected_inputs(), ["op_image_resize::Size"]);
        let state = wf.suspend().unwrap();
        assert!(state.len() > 32 * 24 * 4, "the thumbnail is in the state ({} bytes)", state.len());
        let mut again = Workflow::resume(&state).unwrap();
        let step = again.next_sync(vec![Input::from(second)]).unwrap();
        assert_eq!(step.output.unwrap(), whole);
    }

    #[test]
    fn a_malformed_image_or_size_is_an_error_naming_the_operation() {
        let broken = Image { width: 64, height: 48, pixels: vec![0; 10] };
        let square = Size { width: 32, height: 32 };
        let err = run_sync(broken, Size { width: 8, height: 8 }, square).unwrap_err().to_string();
        assert!(err.contains("op_image_resize") && err.contains("not 10"), "{err}");
        let err = run_sync(photo(), Size { width: 0, height: 8 }, square).unwrap_err().to_string();
        assert!(err.contains("cannot resize to 0 x 8"), "{err}");
        // A thumbnail under 8 x 8 still hashes, as blockhash-core does.
        let hashes = run_sync(photo(), Size { width: 4, height: 4 }, square).unwrap();
        assert!(hashes.iter().all(|h| h.len() == 16), "{hashes:?}");
    }
}
