//! The floor of the run endpoint's benchmark: `POST /run` with a
//! workflow's one `Bytes` input as the body, answered with its output as
//! JSON, by the generated crate called in process (no Wasm, no isolation)
//! behind the HTTP stack `braid serve` uses (axum on hyper, tokio's
//! multi-threaded runtime, mimalloc). Prints `listening on http://ADDR` on stderr.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::post;

/// The allocator `braid serve` has.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The output as the run endpoint writes it.
#[cfg(feature = "cidv1_from_bytes")]
fn json(output: wf::Output) -> String {
    serde_json::Value::String(output.to_string()).to_string()
}

#[cfg(feature = "photo_proof")]
fn json(p: wf::Output) -> String {
    serde_json::json!({
        "fileCid": p.file_cid.to_string(),
        "pixelsCid": p.pixels_cid.to_string(),
        "blockhash": p.blockhash,
        "width": p.width,
        "height": p.height,
    })
    .to_string()
}

async fn run(body: Bytes) -> Result<([(&'static str, &'static str); 1], String), (StatusCode, String)> {
    match wf::run_sync(body.to_vec().into()) {
        Ok(output) => Ok(([("content-type", "application/json")], json(output))),
        Err(e) => Err((StatusCode::UNPROCESSABLE_ENTITY, e.to_string())),
    }
}

#[tokio::main]
async fn main() {
    let app = axum::Router::new()
        .route("/run", post(run))
        .layer(axum::extract::DefaultBodyLimit::max(16 << 20));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    eprintln!("listening on http://{}", listener.local_addr().expect("an address"));
    axum::serve(listener, app).await.expect("the server runs");
}
