//! `wf_cidv1_from_bytes::stream()`: the input in chunks gives what `run`
//! gives for the whole, however it is cut; and `run_many`, `run` on each
//! of a batch.

#[cfg(test)]
mod tests {
    use wf_cidv1_from_bytes as wf;

    fn streamed(data: &[u8], size: usize) -> String {
        let mut stream = wf::stream().unwrap();
        data.chunks(size).for_each(|chunk| stream.update(chunk));
        stream.finish().unwrap().into_string()
    }

    #[test]
    fn chunks_of_any_size_give_the_output_of_run() {
        // 2.5 MiB: a short last chunk after two of 1 MiB.
        let data: Vec<u8> = (0..(5usize << 19)).map(|i| (i.wrapping_mul(131) >> 2) as u8).collect();
        let whole = wf::run_sync(data.clone()).unwrap().into_string();
        for size in [1 << 20, 65_537, 4099] {
            assert_eq!(streamed(&data, size), whole, "chunks of {size}");
        }
        let part = &data[..50_000];
        let expected = wf::run_sync(part.to_vec()).unwrap().into_string();
        assert_eq!(streamed(part, 1), expected, "chunks of 1 byte");
        assert_eq!(streamed(part, 7), expected, "chunks of 7 bytes");
    }

    #[test]
    fn run_many_gives_run_of_each() {
        let inputs: Vec<Vec<u8>> = (0..50).map(|n| (0..n * 37).map(|i| (i * 7) as u8).collect()).collect();
        let outputs = wf::run_many(inputs.iter().map(|input| (input.clone(),)));
        assert_eq!(outputs.len(), inputs.len());
        for (input, output) in inputs.into_iter().zip(outputs) {
            assert_eq!(output.unwrap(), wf::run_sync(input).unwrap());
        }
        assert!(wf::run_many(core::iter::empty::<wf::RunInputs>()).is_empty());
    }

    #[test]
    fn the_empty_input_streams_too() {
        let expected = wf::run_sync(Vec::new()).unwrap().into_string();
        assert_eq!(wf::stream().unwrap().finish().unwrap().into_string(), expected);
        let mut stream = wf::stream().unwrap();
        stream.update(&[]);
        assert_eq!(stream.finish().unwrap().into_string(), expected);
        // The CID of nothing, as the CLI and the JS packages give it.
        assert!(expected.starts_with("bafkr4i"), "{expected}");
    }
}
