//! `POST /` with any body: the CIDv1 (raw codec, blake3, base32) of the
//! body, as the JSON string Braid's run endpoint answers for
//! `cidv1_from_bytes`. Written by hand against wasi:http, for the
//! `wasmtime serve` row of `make bench-run`.

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

struct Cid;

wasip2::http::proxy::export!(Cid);

impl wasip2::exports::http::incoming_handler::Guest for Cid {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let (status, text) = match read_body(&request) {
            Some(body) => (200, format!("\"{}\"", cid_of(&body))),
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
            let _ = stream.blocking_write_and_flush(text.as_bytes());
        }
        let _ = OutgoingBody::finish(body, None);
    }
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

/// CIDv1, raw codec (0x55), a blake3 multihash (0x1e, 32 bytes), in
/// multibase base32 lower case without padding (`b`).
fn cid_of(bytes: &[u8]) -> String {
    let mut cid = vec![0x01, 0x55, 0x1e, 0x20];
    cid.extend_from_slice(blake3::hash(bytes).as_bytes());
    let mut text = String::from("b");
    base32(&cid, &mut text);
    text
}

/// RFC 4648 base32, lower case, no padding.
fn base32(bytes: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let (mut buffer, mut bits) = (0u32, 0);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
}
