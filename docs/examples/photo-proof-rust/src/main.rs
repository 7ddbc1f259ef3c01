//! Prints the proof of the photo at the path given, as JSON:
//! `cargo run -- photo.jpg`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: photo-proof PHOTO (a PNG or JPEG file)");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The whole workflow, natively: no Wasm, no serialization between steps.
    match wf_photo_proof::run_sync(bytes) {
        Ok(proof) => {
            println!(
                "{{\"fileCid\":\"{}\",\"pixelsCid\":\"{}\",\"blockhash\":\"{}\",\"width\":{},\"height\":{}}}",
                proof.file_cid, proof.pixels_cid, proof.blockhash, proof.width, proof.height
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            ExitCode::FAILURE
        }
    }
}
