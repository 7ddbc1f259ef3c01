//! `POST /` with a PNG or JPEG file as the body: photo_proof's record (the
//! file's CID, the pixels' CID, the blockhash, the width and height) as
//! the JSON Braid's run endpoint answers. Written by hand against
//! wasi:http around the operation crates, for the `wasmtime serve` row of
//! `make bench-run`.

use braid_support::{json, Config, Error};
use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

struct Photo;

wasip2::http::proxy::export!(Photo);

impl wasip2::exports::http::incoming_handler::Guest for Photo {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let (status, text) = match read_body(&request) {
            Some(body) => match proof(body) {
                Ok(text) => (200, text),
                Err(e) => (422, format!("{:?}", e.to_string())),
            },
            None => (400, "\"the body could not be read\"".to_string()),
        };
        let headers = Fields::new();
        let _ = headers.set("content-type", &[b"application/json".to_vec()]);
        let response = OutgoingResponse::new(headers);
        let _ = response.set_status_code(status);
        let body = response.body().expect("a new response's body");
        ResponseOutparam::set(out, Ok(response));
        {
            let stream = body.write().expect("the body's stream");
            for chunk in text.as_bytes().chunks(4096) {
                let _ = stream.blocking_write_and_flush(chunk);
            }
        }
        let _ = OutgoingBody::finish(body, None);
    }
}

/// photo_proof's five steps, one after the other, as JSON.
fn proof(file: Vec<u8>) -> Result<String, Error> {
    let none = Config::new();
    let cid = |hasher: &str, bytes: &[u8]| {
        let hash = op_multihash::execute_sync(bytes, &Config::from_checked(&[("hasher", hasher)]))?;
        op_cid::execute_sync(&hash, &Config::from_checked(&[("base", "base32"), ("codec", "raw")]))
    };
    let image = op_image_decode::execute_sync(&file, &none)?;
    let file_cid = cid("blake3", &file)?;
    let pixels_cid = cid("sha2-256", op_image_pixels::execute_sync(&image, &none)?)?;
    let blockhash = op_image_phash::execute_sync(&image, &Config::from_checked(&[("algorithm", "blockhash")]))?;
    let proof = op_photo_proof::execute_sync(&file_cid, &pixels_cid, &blockhash, &image, &none)?;
    Ok(json::to_string(&proof))
}

/// The whole request body.
fn read_body(request: &IncomingRequest) -> Option<Vec<u8>> {
    let body = request.consume().ok()?;
    let stream = body.stream().ok()?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 << 10) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(wasip2::io::streams::StreamError::Closed) => break,
            Err(_) => return None,
        }
    }
    Some(bytes)
}
