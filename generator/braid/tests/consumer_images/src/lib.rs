//! Uses `wf_decoded_images` natively: a value type of one's own as an
//! external input and the output, through `run` and through `next` with a
//! suspend and resume between the two segments.

#[cfg(test)]
mod tests {
    use wf_decoded_images::{run_sync, Image, Input, Workflow};

    fn sample(name: &str) -> Vec<u8> {
        let path = format!("{}/../../../../workflows/samples/images/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn given() -> Image {
        Image { width: 1, height: 1, pixels: vec![1, 2, 3, 4] }
    }

    #[test]
    fn run_decodes_like_pngjs_and_returns_the_given_image() {
        let images = run_sync(sample("photo.png"), given()).unwrap();
        assert_eq!((images[0].width, images[0].height), (64, 48));
        assert!(images[0].pixels == sample("photo.png.rgba"), "pixels differ from pngjs's");
        assert_eq!(images[1], given());
    }

    #[test]
    fn a_suspended_workflow_resumes_with_the_decoded_image_inside() {
        let mut wf = Workflow::new();
        assert_eq!(wf.expected_inputs(), ["Bytes"]);
        wf.next_sync(vec![Input::from(sample("gray.png"))]).unwrap();
        assert_eq!(wf.expected_inputs(), ["op_image_decode::Image"]);
        let state = wf.suspend().unwrap();
        let mut again = Workflow::resume(&state).unwrap();
        let err = again.next_sync(vec![Input::from(sample("gray.png"))]).unwrap_err();
        assert_eq!(err.to_string(), "decoded_images segment 1 input 0: expected op_image_decode::Image, found Bytes");
        let step = again.next_sync(vec![Input::from(given())]).unwrap();
        let images = step.output.unwrap();
        assert!(images[0].pixels == sample("gray.png.rgba"));
        assert_eq!(images[1], given());
    }

    #[test]
    fn a_bad_file_is_an_error() {
        let err = run_sync(b"not an image".to_vec(), given()).unwrap_err();
        assert!(err.to_string().contains("not a PNG or JPEG file"), "{err}");
    }
}
