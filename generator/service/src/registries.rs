//! What the Cargo and npm registries share: the address clients reach the
//! service at, for the absolute URLs that Cargo's `config.json` (`dl`) and
//! npm's package documents (`dist.tarball`) must hold. It is the
//! configured `--public-url`, or `http://` and the request's `Host`, which
//! is checked to be a plain host and port (it is written into JSON that
//! clients follow).

use axum::http::{header, HeaderMap};

use crate::problem::Problem;
use crate::Config;

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
