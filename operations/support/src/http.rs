//! A workflow as a wasi:http handler (feature `http`, `braid build
//! --targets http`): the run endpoint's contract answered inside the
//! component, so that a workflow answers the same on Braid's service and
//! on any host of `wasi:http/incoming-handler` (WASI 0.2, which `wasmtime
//! serve`, `jco serve`, Spin and wasmCloud run). A request's inputs are read
//! as the service reads them ([`braid_schema::wire::inputs`]: JSON by
//! position or name, bytes as base64; `multipart/form-data` by name; the
//! raw body of a workflow of one `Bytes` input), within the workflow's own
//! input limit; the output is JSON, or raw bytes with `Accept:
//! application/octet-stream`; failures are `application/problem+json`
//! with the service's statuses (400, 405, 413, 415, 422); `GET` describes
//! the inputs and the output.
//!
//! [`Handler::answer`] is the whole contract, on plain values (tested
//! natively); [`Handler::handle`] moves a wasi:http request into it and
//! its answer out.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

pub use braid_schema::wire::Shape;
use braid_schema::wire::{self, InputsError, Sent};
pub use wasip2;

use crate::Error;

/// A workflow as its HTTP handler runs it.
pub struct Handler {
    /// Its name.
    pub workflow: &'static str,
    /// Its inputs and output, as the manifest types them
    /// (`text: String, bytes: Bytes -> Cid`).
    pub signature: &'static str,
    /// Its inputs (WIT names, in order) and their shapes.
    pub params: Vec<(String, Shape)>,
    /// Its output's shape.
    pub output: Shape,
    /// The largest request body it reads, in bytes.
    pub input_limit: usize,
    /// The workflow on its inputs packed one after the other, giving its
    /// output packed (the component's `run-packed`).
    pub run: fn(Vec<u8>) -> Result<Vec<u8>, Error>,
    /// For a workflow that streams (its one `Bytes` input read in
    /// chunks): the workflow on the chunks `next` gives, in order, until
    /// it gives none, giving its output packed. A raw body then goes
    /// through it, never held whole.
    pub stream: Option<StreamRun>,
}

/// The workflow on the chunks of its input that `next` gives.
pub type StreamRun = fn(next: &mut dyn FnMut() -> Option<Vec<u8>>) -> Result<Vec<u8>, Error>;

/// An answer: its status, media type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// Its `Content-Type`.
    pub media_type: &'static str,
    /// Its body.
    pub body: Vec<u8>,
}

/// A request's body as read: whole, or over the input limit.
#[derive(Debug)]
pub enum Body {
    /// All of it.
    Whole(Vec<u8>),
    /// It went over the input limit, and was not read further.
    TooLarge,
    /// The connection failed while it was read.
    Broken,
}

/// The largest request body a workflow's HTTP handler reads unless its
/// build says otherwise: the run endpoint's (`braid serve --input-limit`).
pub const DEFAULT_INPUT_LIMIT: usize = braid_schema::wire::DEFAULT_INPUT_LIMIT;

/// The input limit a workflow's HTTP handler is compiled with: the bytes
/// `set` says (`BRAID_HTTP_INPUT_LIMIT` at compile time, which `braid build
/// --http-input-limit` sets), else [`DEFAULT_INPUT_LIMIT`]. Evaluated in a
/// `const`, so anything but a positive decimal number fails the build.
pub const fn input_limit(set: Option<&str>) -> usize {
    let Some(text) = set else { return DEFAULT_INPUT_LIMIT };
    let digits = text.as_bytes();
    assert!(!digits.is_empty(), "BRAID_HTTP_INPUT_LIMIT is empty: give the input limit in bytes");
    let (mut limit, mut i) = (0usize, 0);
    while i < digits.len() {
        let digit = digits[i];
        assert!(digit.is_ascii_digit(), "BRAID_HTTP_INPUT_LIMIT is not a number of bytes");
        limit = match limit.checked_mul(10) {
            Some(n) => match n.checked_add((digit - b'0') as usize) {
                Some(n) => n,
                None => panic!("BRAID_HTTP_INPUT_LIMIT is too large"),
            },
            None => panic!("BRAID_HTTP_INPUT_LIMIT is too large"),
        };
        i += 1;
    }
    assert!(limit > 0, "BRAID_HTTP_INPUT_LIMIT is 0: give a positive number of bytes");
    limit
}

const JSON: &str = "application/json";
const BYTES: &str = "application/octet-stream";

impl Handler {
    /// The answer to a request of `method`, with the headers'
    /// `content_type` and `accept` values, and `body`.
    pub fn answer(&self, method: &str, content_type: &str, accept: &[&str], body: Body) -> Answer {
        match method {
            "GET" | "HEAD" => return self.describe(),
            "POST" => {}
            _ => return problem(405, format!("{method} is not answered here: POST the inputs, or GET the signature")),
        }
        let body = match body {
            Body::Whole(body) => body,
            Body::TooLarge => {
                return problem(413, format!("the input is over the limit of {} bytes", self.input_limit));
            }
            Body::Broken => return problem(400, "the request's body could not be read to its end".into()),
        };
        let sent = match wire::media_type(content_type).as_str() {
            "application/json" => Sent::Json(&body),
            "multipart/form-data" => match multipart(content_type, &body) {
                Ok(parts) => Sent::Parts(parts),
                Err(why) => return problem(400, format!("the multipart body cannot be read: {why}")),
            },
            // Moved into its input, not copied.
            _ => Sent::Raw(body),
        };
        let inputs = match wire::inputs(&self.params, sent) {
            Ok(inputs) => inputs,
            Err(InputsError::Bad(why)) => return problem(400, why),
            Err(InputsError::Unsupported(why)) => return problem(415, why),
        };
        let mut packed = Vec::with_capacity(inputs.iter().map(wire::Input::size).sum::<usize>() + 4 * inputs.len());
        for input in &inputs {
            if let Err(why) = input.pack(&mut packed) {
                return problem(413, why);
            }
        }
        drop(inputs);
        self.output((self.run)(packed), accept)
    }

    /// The answer for what a run gave.
    fn output(&self, ran: Result<Vec<u8>, Error>, accept: &[&str]) -> Answer {
        let output = match ran {
            Ok(output) => output,
            Err(error) => return problem(422, format!("the workflow failed ({}): {error}", error.kind())),
        };
        if self.output == Shape::Bytes && wire::accepts_exactly(accept, BYTES) {
            // Its length, then its bytes.
            let mut reader = wire::Reader::new(&output);
            return match reader.bytes() {
                Ok(bytes) => Answer { status: 200, media_type: BYTES, body: bytes.to_vec() },
                Err(why) => problem(500, format!("the workflow gave a malformed output: {why}")),
            };
        }
        match wire::to_json_text(&output, &self.output) {
            Ok(text) => Answer { status: 200, media_type: JSON, body: text.into_bytes() },
            Err(why) => problem(500, format!("the workflow gave a malformed output: {why}")),
        }
    }

    /// What `GET` answers: the workflow, its inputs and output, how to send them.
    fn describe(&self) -> Answer {
        let mut out = String::from("{\"workflow\":");
        out.push_str(&json_string(self.workflow));
        out.push_str(",\"signature\":");
        out.push_str(&json_string(self.signature));
        out.push_str(",\"inputs\":[");
        for (i, (name, _)) in self.params.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&json_string(&braid_schema::camel(name)));
        }
        out.push_str("],\"input_limit\":");
        out.push_str(&self.input_limit.to_string());
        out.push_str(",\"send\":");
        let raw = matches!(self.params.as_slice(), [(_, Shape::Bytes)]);
        out.push_str(&json_string(&format!(
            "POST the inputs as JSON (Content-Type: application/json), an array in order or an object by name, \
             bytes as base64; or as multipart/form-data by name{}. The output is JSON{}.",
            if raw { "; or the raw bytes of its one input" } else { "" },
            if self.output == Shape::Bytes { ", or its raw bytes with Accept: application/octet-stream" } else { "" }
        )));
        out.push('}');
        Answer { status: 200, media_type: JSON, body: out.into_bytes() }
    }

    /// Answers a wasi:http request: its body read in chunks (at most the
    /// input limit is held), its answer written in chunks.
    pub fn handle(&self, request: wasip2::http::types::IncomingRequest, out: wasip2::http::types::ResponseOutparam) {
        use wasip2::http::types::Method;
        let other;
        let method = match request.method() {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Options => "OPTIONS",
            Method::Connect => "CONNECT",
            Method::Trace => "TRACE",
            Method::Other(name) => {
                other = name;
                other.as_str()
            }
        };
        let headers = request.headers();
        let text = |name: &str| -> Vec<String> {
            headers.get(name).into_iter().filter_map(|v| String::from_utf8(v).ok()).collect()
        };
        let content_type = text("content-type").into_iter().next().unwrap_or_default();
        let accept = text("accept");
        let accept: Vec<&str> = accept.iter().map(String::as_str).collect();
        let raw = !matches!(wire::media_type(&content_type).as_str(), "application/json" | "multipart/form-data");
        let answer = match (method, self.stream) {
            ("POST", Some(stream)) if raw => self.streamed(stream, &request, &accept),
            ("POST", _) => self.answer(method, &content_type, &accept, read_body(&request, self.input_limit)),
            _ => self.answer(method, &content_type, &accept, Body::Whole(Vec::new())),
        };
        drop(headers);
        respond(out, &answer, method == "HEAD");
    }

    /// The answer to a raw body run through the workflow's stream, chunk by
    /// chunk as the host gives them: at most a chunk of it is held.
    fn streamed(&self, stream: StreamRun, request: &wasip2::http::types::IncomingRequest, accept: &[&str]) -> Answer {
        let Ok(body) = request.consume() else { return self.answer("POST", "", accept, Body::Broken) };
        let Ok(input) = body.stream() else { return self.answer("POST", "", accept, Body::Broken) };
        let (mut read, mut failed) = (0usize, None);
        let ran = stream(&mut || {
            if failed.is_some() {
                return None;
            }
            match input.blocking_read(64 << 10) {
                Ok(chunk) if read + chunk.len() > self.input_limit => {
                    failed = Some(Body::TooLarge);
                    None
                }
                Ok(chunk) => {
                    read += chunk.len();
                    Some(chunk)
                }
                Err(wasip2::io::streams::StreamError::Closed) => None,
                Err(_) => {
                    failed = Some(Body::Broken);
                    None
                }
            }
        });
        match failed {
            Some(body) => self.answer("POST", "", accept, body),
            None => self.output(ran, accept),
        }
    }
}

/// The request's body, up to `limit` bytes.
fn read_body(request: &wasip2::http::types::IncomingRequest, limit: usize) -> Body {
    let Ok(body) = request.consume() else { return Body::Broken };
    let Ok(stream) = body.stream() else { return Body::Broken };
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 << 10) {
            Ok(chunk) if bytes.len() + chunk.len() > limit => return Body::TooLarge,
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(wasip2::io::streams::StreamError::Closed) => return Body::Whole(bytes),
            Err(_) => return Body::Broken,
        }
    }
}

/// Writes `answer` as the response (headers only for `HEAD`).
fn respond(out: wasip2::http::types::ResponseOutparam, answer: &Answer, head: bool) {
    use wasip2::http::types::{Fields, OutgoingBody, OutgoingResponse, ResponseOutparam};
    // One host call for all of them (`from-list`), not one a header.
    let mut fields = vec![("content-type".to_string(), answer.media_type.as_bytes().to_vec())];
    if !head {
        // (A host checks what is written against it: none is, for `HEAD`.)
        fields.push(("content-length".to_string(), answer.body.len().to_string().into_bytes()));
    }
    if answer.status == 405 {
        fields.push(("allow".to_string(), b"GET, HEAD, POST".to_vec()));
    }
    // A host that refused them (none of them is a forbidden header) still
    // gets the status and the body.
    let headers = Fields::from_list(&fields).unwrap_or_else(|_| Fields::new());
    let response = OutgoingResponse::new(headers);
    let _ = response.set_status_code(answer.status);
    let Ok(body) = response.body() else { return };
    ResponseOutparam::set(out, Ok(response));
    if !head {
        if let Ok(stream) = body.write() {
            // A blocking write takes at most 4096 bytes.
            for chunk in answer.body.chunks(4096) {
                if stream.blocking_write_and_flush(chunk).is_err() {
                    break;
                }
            }
        }
    }
    let _ = OutgoingBody::finish(body, None);
}

/// A problem document (RFC 9457), as the service writes them.
fn problem(status: u16, detail: String) -> Answer {
    let title = match status {
        400 => "Bad Request",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        _ => "Internal Server Error",
    };
    let body = format!(
        "{{\"type\":\"about:blank\",\"title\":{},\"status\":{status},\"detail\":{}}}",
        json_string(title),
        json_string(&detail)
    );
    Answer { status, media_type: "application/problem+json", body: body.into_bytes() }
}

fn json_string(text: &str) -> String {
    let mut out = String::new();
    crate::json::write_str(text, &mut out);
    out
}

/// The parts of a `multipart/form-data` body (RFC 7578), by name, with the
/// boundary its media type gives.
fn multipart(content_type: &str, body: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let boundary = content_type
        .split(';')
        .skip(1)
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, v)| v.trim().trim_matches('"'))
        .filter(|b| !b.is_empty())
        .ok_or("its Content-Type has no boundary")?;
    // RFC 2046: at most 70 characters (a longer one only makes searches slower).
    if boundary.len() > 70 {
        return Err("its boundary is longer than 70 characters".into());
    }
    let delimiter = format!("--{boundary}");
    let mut rest = body;
    // Up to and past the first delimiter (a preamble is ignored).
    let at = find(rest, delimiter.as_bytes()).ok_or("no part starts")?;
    rest = &rest[at + delimiter.len()..];
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest.strip_prefix(b"\r\n").ok_or("a delimiter is not followed by a line break")?;
        let end = find(rest, b"\r\n\r\n").ok_or("a part's headers do not end")?;
        let head = core::str::from_utf8(&rest[..end]).map_err(|_| "a part's headers are not UTF-8")?;
        rest = &rest[end + 4..];
        let close = format!("\r\n{delimiter}");
        let stop = find(rest, close.as_bytes()).ok_or("a part does not end")?;
        let name = head
            .split("\r\n")
            .filter_map(|line| line.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-disposition"))
            .and_then(|(_, v)| {
                v.split(';').filter_map(|p| p.split_once('=')).find(|(k, _)| k.trim() == "name").map(|(_, n)| n)
            })
            .map(|n| n.trim().trim_matches('"').to_string())
            .ok_or("a part has no name (Content-Disposition: form-data; name=...)")?;
        parts.push((name, rest[..stop].to_vec()));
        rest = &rest[stop + close.len()..];
    }
}

/// Where `needle` first starts in `haystack`, in time linear in both.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    use alloc::boxed::Box;
    use alloc::vec;

    use super::*;

    /// `text: String, bytes: Bytes -> Bytes`: their concatenation, or a
    /// failure for the text `fail`.
    fn concat(packed: Vec<u8>) -> Result<Vec<u8>, Error> {
        let mut r = wire::Reader::new(&packed);
        let text = r.str().map_err(|e| Error::invalid_input("run-packed", e))?;
        let bytes = r.bytes().map_err(|e| Error::invalid_input("run-packed", e))?;
        if text == "fail" {
            return Err(Error::Codec("it failed".into()));
        }
        let mut out = Vec::new();
        wire::put_bytes(&[text.as_bytes(), bytes].concat(), &mut out).unwrap();
        Ok(out)
    }

    #[test]
    fn the_input_limit_is_the_build_s_or_16_mib() {
        assert_eq!(input_limit(None), 16 << 20);
        assert_eq!(input_limit(Some("1048576")), 1 << 20);
        assert_eq!(input_limit(Some("1")), 1);
        const SET: usize = input_limit(Some("42"));
        assert_eq!(SET, 42);
        for bad in ["", "0", "1 MiB", "-1", "99999999999999999999999"] {
            assert!(std::panic::catch_unwind(|| input_limit(Some(bad))).is_err(), "{bad}");
        }
    }

    fn handler() -> Handler {
        Handler {
            workflow: "salted",
            signature: "text: String, bytes: Bytes -> Bytes",
            params: vec![("text".into(), Shape::String), ("bytes".into(), Shape::Bytes)],
            output: Shape::Bytes,
            input_limit: 64,
            run: concat,
            stream: None,
        }
    }

    fn post(h: &Handler, content_type: &str, accept: &[&str], body: &[u8]) -> (u16, String) {
        let a = h.answer("POST", content_type, accept, Body::Whole(body.to_vec()));
        (a.status, String::from_utf8_lossy(&a.body).into_owned())
    }

    #[test]
    fn inputs_come_as_json_or_parts_and_the_output_as_json_or_bytes() {
        let h = handler();
        assert_eq!(post(&h, "application/json", &[], br#"["a", "Yg=="]"#), (200, "\"YWI=\"".into()));
        assert_eq!(
            post(&h, "Application/JSON; charset=utf-8", &[], br#"{"bytes": "Yg==", "text": "a"}"#).1,
            "\"YWI=\""
        );
        assert_eq!(post(&h, "application/json", &[BYTES], br#"["a", "Yg=="]"#), (200, "ab".into()));
        let form = b"--XY\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\na\r\n--XY\r\n\
            Content-Disposition: form-data; name=\"bytes\"; filename=\"b\"\r\nContent-Type: application/octet-stream\r\n\r\nb\r\n--XY--\r\n";
        assert_eq!(post(&h, "multipart/form-data; boundary=XY", &[BYTES], form), (200, "ab".into()));
    }

    #[test]
    fn failures_are_problems_with_the_services_statuses() {
        let h = handler();
        let (status, body) = post(&h, "application/octet-stream", &[], b"raw");
        assert_eq!(status, 415);
        assert!(body.contains("only a workflow of one Bytes input takes a raw body"), "{body}");
        assert!(body.starts_with("{\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\",\"status\":415"));
        let (status, body) = post(&h, "application/json", &[], br#"["a"]"#);
        assert_eq!((status, body.contains("takes 2 input(s) (text, bytes), found 1")), (400, true), "{body}");
        let (status, body) = post(&h, "application/json", &[], br#"["a", "%%"]"#);
        assert_eq!((status, body.contains("input bytes: not base64")), (400, true), "{body}");
        let (status, body) = post(&h, "application/json", &[], br#"["fail", ""]"#);
        assert_eq!((status, body.contains("the workflow failed (failed): ")), (422, true), "{body}");
        assert_eq!(h.answer("POST", "application/json", &[], Body::TooLarge).status, 413);
        assert_eq!(h.answer("PUT", "", &[], Body::Whole(vec![])).status, 405);
        let (status, body) = post(&h, "multipart/form-data", &[], b"--x");
        assert_eq!((status, body.contains("no boundary")), (400, true), "{body}");
        let long = format!("multipart/form-data; boundary={}", "a".repeat(71));
        let (status, body) = post(&h, &long, &[], b"--x");
        assert_eq!((status, body.contains("longer than 70")), (400, true), "{body}");
    }

    #[test]
    fn get_describes_the_inputs_and_output() {
        let h = Handler { output: Shape::List(Box::new(Shape::U64)), ..handler() };
        let a = h.answer("GET", "", &[], Body::Whole(vec![]));
        let text = String::from_utf8(a.body).unwrap();
        assert_eq!(a.status, 200);
        assert!(text.starts_with(r#"{"workflow":"salted","signature":"text: String, bytes: Bytes -> Bytes","inputs":["text","bytes"],"input_limit":64,"#), "{text}");
    }
}
