//! The base URL of the registries' answers: the address clients reach the
//! service at, for the absolute URLs that Cargo's `config.json` (`dl`) and
//! npm's package documents (`dist.tarball`) must hold. It is the
//! configured `--public-url`, or `http://` and the request's `Host`,
//! checked to be a plain host and port; and a `--public-url` checked at
//! start ([`check_public_url`]).

use axum::http::{header, HeaderMap};

use crate::problem::Problem;
use crate::HttpConfig;

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

/// Whether `host` is a plain host name or address with an optional port,
/// as `Host` carries it (it is written into JSON that clients follow).
fn is_host(host: &str) -> bool {
    host.len() <= 255 && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b))
}

/// `response` (whose URLs came from [`base_url`]) marked as depending on
/// the request's `Host` when no `--public-url` is set: `Vary: Host`, and
/// `Cache-Control: no-cache`, so that a shared cache in front never hands
/// one client's host to another.
pub(super) fn for_host(config: &HttpConfig, mut response: axum::response::Response) -> axum::response::Response {
    if config.public_url.is_none() {
        let headers = response.headers_mut();
        headers.insert(header::VARY, header::HeaderValue::from_static("host"));
        headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
    }
    response
}

/// The base URL of this request's answers, without a trailing `/`.
pub(super) fn base_url(config: &HttpConfig, headers: &HeaderMap) -> Result<String, Problem> {
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
    }

    #[test]
    fn the_base_url_is_the_public_one_or_a_checked_host() {
        let mut config = HttpConfig::default();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "127.0.0.1:4000".parse().unwrap());
        assert_eq!(base_url(&config, &headers).unwrap(), "http://127.0.0.1:4000");
        headers.insert(header::HOST, "evil\"/x".parse().unwrap());
        assert!(base_url(&config, &headers).is_err());
        config.public_url = Some("https://braid.example.org".into());
        assert_eq!(base_url(&config, &headers).unwrap(), "https://braid.example.org");
    }
}
