//! What the Cargo and npm registries share: the address clients reach the
//! service at, for the absolute URLs that Cargo's `config.json` (`dl`) and
//! npm's package documents (`dist.tarball`) must hold. It is the
//! configured `--public-url`, or `http://` and the request's `Host`, which
//! is checked to be a plain host and port (it is written into JSON that
//! clients follow). And [`add_operations`]: every registered operation in
//! the Cargo registry, not only those a build used.

use axum::http::{header, HeaderMap};

use braid::package::cargo::CratePackage;
use braid_store::ids::ContentId;
use braid_store::{Artifact, Ecosystem, Package};

use crate::cas::CasError;
use crate::problem::Problem;
use crate::{Config, Env};

#[derive(Debug, thiserror::Error)]
#[error("--public-url {0:?} is not an http:// or https:// URL with a host and no query (https://braid.example.org)")]
pub struct BadPublicUrl(String);

/// Checks a `--public-url` and drops its trailing `/`.
pub fn check_public_url(url: &str) -> Result<String, BadPublicUrl> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    let ok = rest.is_some_and(|r| {
        let host = r.split('/').next().unwrap_or_default();
        !host.is_empty() && is_host(host) && !r.contains(['?', '#', ' ', '"', '\\'])
    });
    if ok {
        Ok(url.trim_end_matches('/').to_string())
    } else {
        Err(BadPublicUrl(url.to_string()))
    }
}

/// A host name or address with an optional port, as `Host` carries it.
fn is_host(host: &str) -> bool {
    host.len() <= 255 && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b))
}

/// Adds every version of every registered operation, with the crates it
/// builds on (braid-support, braid-macros, ...), to the Cargo registry:
/// at start and after an operation is published. Blocking (it packs a few
/// hundred files); what it cannot add is logged, never fatal.
pub fn add_operations(env: &Env) {
    let registry = env.registry();
    // Scratch space outside the data directory: its free space is the
    // builds' (freeing it must not make room they were refused).
    let scratch = match tempfile::Builder::new().prefix("braid-registry-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return tracing::warn!("the operations are not in the Cargo registry: a scratch directory: {e}"),
    };
    let (crates, skipped) = braid::package::cargo::registry_packages(&registry, scratch.path());
    drop(scratch);
    for (op, why) in skipped {
        tracing::warn!("{op} is not in the Cargo registry: {why}");
    }
    let mut artifacts = Vec::new();
    let mut packages = Vec::new();
    for c in crates {
        let what = format!("{} {}", c.name, c.version);
        match store_cargo_package(env, c) {
            Ok((artifact, package)) => {
                artifacts.push(artifact);
                packages.push(package);
            }
            Err(e) => tracing::error!("adding {what} to the Cargo registry: {e}"),
        }
    }
    match env.store.blocking(env.store.add_registry_packages(&artifacts, &packages)) {
        Ok(conflicts) => {
            for conflict in conflicts {
                tracing::warn!("{conflict} is already in the Cargo registry with other content: left as it was");
            }
        }
        Err(e) => tracing::error!("adding the registered operations to the Cargo registry: {e}"),
    }
}

/// Puts a package's archive (`bytes`, an artifact named `file`) in the
/// artifact store; the package `made` for its content id.
pub(crate) fn store_package(
    env: &Env,
    file: String,
    bytes: &[u8],
    made: impl FnOnce(ContentId) -> Package,
) -> Result<(Artifact, Package), CasError> {
    let cid = env.cas.put(bytes)?;
    let artifact =
        Artifact { name: file, cid: cid.clone(), size: bytes.len() as u64, media_type: "application/gzip".into() };
    Ok((artifact, made(cid)))
}

/// [`store_package`] for a `.crate`.
pub(crate) fn store_cargo_package(env: &Env, c: CratePackage) -> Result<(Artifact, Package), CasError> {
    let file = format!("{}-{}.crate", c.name, c.version);
    let (name, version, entry, digest) = (c.name, c.version, c.index_line, c.cksum);
    store_package(env, file, &c.bytes, |cid| Package { ecosystem: Ecosystem::Cargo, name, version, cid, entry, digest })
}

/// `response` (whose URLs came from [`base_url`]) marked as depending on
/// the request's `Host` when no `--public-url` is set: `Vary: Host`, and
/// `Cache-Control: no-cache`, so that a shared cache in front never hands
/// one client's host to another.
pub fn for_host(config: &Config, mut response: axum::response::Response) -> axum::response::Response {
    if config.public_url.is_none() {
        let headers = response.headers_mut();
        headers.insert(header::VARY, header::HeaderValue::from_static("host"));
        headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
    }
    response
}

/// The base URL of this request's answers, without a trailing `/`.
pub fn base_url(config: &Config, headers: &HeaderMap) -> Result<String, Problem> {
    if let Some(url) = &config.public_url {
        return Ok(url.clone());
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if host.is_empty() || !is_host(host) {
        return Err(Problem::bad_request(
            "the registries need the request's Host header (a host name and port) to write their URLs; or start the server with --public-url",
        ));
    }
    Ok(format!("http://{host}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_urls_and_hosts_are_checked() {
        assert_eq!(check_public_url("https://braid.example.org/").unwrap(), "https://braid.example.org");
        assert_eq!(check_public_url("http://10.0.0.1:8080/braid").unwrap(), "http://10.0.0.1:8080/braid");
        for bad in ["ftp://x", "https://", "https://a b", "https://x/?q", "braid.example.org", "https://x\"y"] {
            assert!(check_public_url(bad).is_err(), "{bad}");
        }
        let config = Config::for_tests(std::path::PathBuf::from("/tmp"));
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "127.0.0.1:4000".parse().unwrap());
        assert_eq!(base_url(&config, &headers).unwrap(), "http://127.0.0.1:4000");
        headers.insert(header::HOST, "evil\"/x".parse().unwrap());
        assert!(base_url(&config, &headers).is_err());
    }
}
