//! `braid serve`: the publish service's flags, logging and runtime.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use braid::build;
use braid_service::Config;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Data directory: SQLite database, artifacts, build directories.
    #[arg(long, default_value = "braid-data")]
    data: PathBuf,
    /// An API key for writes (repeatable); also BRAID_API_KEYS=k1,k2. Without any, one is generated and printed.
    #[arg(long = "api-key", value_name = "KEY")]
    api_keys: Vec<String>,
    /// A key for publishing operations (repeatable), apart from the API keys; also
    /// BRAID_PUBLISHER_KEYS=k1,k2. Without any, publishing is off.
    #[arg(long = "publisher-key", value_name = "KEY")]
    publisher_keys: Vec<String>,
    /// Largest operation upload (`POST /v1/operations`, a .tar.gz), in bytes (413 beyond).
    #[arg(long, default_value_t = braid_service::MAX_UPLOAD)]
    max_upload: usize,
    /// Concurrent builds (default: half the cores, at least 1). Builds that
    /// share a target directory take turns compiling: cargo locks it, and
    /// so does Braid's staging directory in it.
    #[arg(long)]
    workers: Option<usize>,
    /// Seconds a build may take before it is stopped.
    #[arg(long, default_value_t = 1800)]
    build_timeout: u64,
    /// Largest request body, in bytes (413 beyond).
    #[arg(long, default_value_t = 2 << 20)]
    max_body: usize,
    #[arg(long)]
    target_dir: Option<PathBuf>,
    /// CPU-heavy requests (validate, generate, publish, artifact reads) run at once (default: one per core).
    #[arg(long)]
    max_checks: Option<usize>,
    /// Heavy requests that may wait for a free slot; beyond, 503 with Retry-After.
    #[arg(long, default_value_t = 64)]
    check_queue: usize,
    /// Largest generated crate, all files together, in bytes (422 beyond).
    #[arg(long, default_value_t = 16 << 20)]
    max_crate_bytes: usize,
    /// Seconds from a request's first byte to the end of its headers (the connection is closed after).
    #[arg(long, default_value_t = 10)]
    header_timeout: u64,
    /// Seconds to send a whole request body (408 after).
    #[arg(long, default_value_t = 30)]
    body_timeout: u64,
    /// Seconds a connection may wait with no byte moving: no new request, or a response the client does not read.
    #[arg(long, default_value_t = 60)]
    idle_timeout: u64,
    /// Open connections at most; more wait to be accepted.
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    /// The service's address as clients reach it (`https://braid.example.org`), for the URLs the Cargo and npm
    /// registries hand out; by default `http://` and the request's Host.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Publish workflows' npm packages under this scope (`@org/wf_name`).
    #[arg(long, value_name = "@SCOPE")]
    npm_scope: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut api_keys = args.api_keys;
    api_keys.extend(keys_from_env("BRAID_API_KEYS"));
    let mut publisher_keys = args.publisher_keys;
    publisher_keys.extend(keys_from_env("BRAID_PUBLISHER_KEYS"));
    if api_keys.is_empty() {
        let key = uuid::Uuid::new_v4().simple().to_string();
        eprintln!("braid serve: no --api-key given; writes need this generated key: {key}");
        api_keys.push(key);
    }
    if let Some(scope) = &args.npm_scope {
        braid::npm_package::check_scope(scope)?;
    }
    let public_url = args.public_url.map(|url| braid_service::registries::check_public_url(&url)).transpose()?;
    let config = Config {
        addr: args.addr,
        data: args.data,
        api_keys,
        publisher_keys,
        max_upload: args.max_upload,
        workers: args.workers.unwrap_or_else(Config::default_workers).max(1),
        build_timeout: Duration::from_secs(args.build_timeout),
        target_dir: args.target_dir.unwrap_or_else(build::default_target_dir),
        braid_exe: std::env::current_exe().context("cannot find the braid executable")?,
        max_body: args.max_body,
        max_checks: args.max_checks.unwrap_or_else(Config::default_checks).max(1),
        check_queue: args.check_queue,
        max_crate_bytes: args.max_crate_bytes,
        limits: braid_service::conn::Limits {
            header_timeout: Duration::from_secs(args.header_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
            max_connections: args.max_connections.max(1),
        },
        body_timeout: Duration::from_secs(args.body_timeout),
        public_url,
        npm_scope: args.npm_scope,
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(braid_service::serve(config))?;
    Ok(())
}

/// Comma-separated keys in the variable `name`.
fn keys_from_env(name: &str) -> Vec<String> {
    let keys = std::env::var(name).unwrap_or_default();
    keys.split(',').map(str::trim).filter(|k| !k.is_empty()).map(String::from).collect()
}
