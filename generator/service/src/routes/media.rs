//! Media types as RFC 9110 writes them: `Content-Type` compared by its
//! type and subtype alone, case-insensitively (`APPLICATION/JSON;
//! charset=utf-8` is JSON, `application/jsonx` is not), and `Accept` read
//! as a list of media ranges with their weights; the rules are
//! [`braid_engine::wire`]'s, which a workflow's HTTP handler shares.

use axum::http::{header, HeaderMap};
use braid_engine::wire;

/// The request's media type without parameters, in lower case (empty when
/// it has none): [`wire::media_type`].
pub(super) fn content_type(headers: &HeaderMap) -> String {
    wire::media_type(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or(""))
}

/// Whether `Accept` names `media_type` itself (not through a wildcard)
/// with a weight above zero: [`wire::accepts_exactly`].
pub(super) fn accepts_exactly(headers: &HeaderMap, media_type: &str) -> bool {
    let accept: Vec<&str> = headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect();
    wire::accepts_exactly(&accept, media_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, value.parse().unwrap());
        h
    }

    #[test]
    fn content_types_are_compared_by_essence_in_any_case() {
        let ct = |v: &str| content_type(&headers(header::CONTENT_TYPE, v));
        assert_eq!(ct("APPLICATION/JSON"), "application/json");
        assert_eq!(ct(" application/json ; charset=utf-8"), "application/json");
        assert_eq!(ct("application/jsonx"), "application/jsonx");
        assert_eq!(ct("Multipart/Form-Data; boundary=x"), "multipart/form-data");
        assert_eq!(content_type(&HeaderMap::new()), "");
    }

    #[test]
    fn accept_is_a_list_of_ranges_with_weights() {
        let bytes = |v: &str| accepts_exactly(&headers(header::ACCEPT, v), "application/octet-stream");
        assert!(bytes("application/octet-stream"));
        assert!(bytes("application/json;q=0.5, Application/Octet-Stream"));
        assert!(bytes("application/octet-stream; q=0.9"));
        assert!(!bytes("application/octet-stream;q=0"));
        // Weights as RFC 9110 writes them, read by their digits: zero is
        // any number of zeros; what is not a weight is ignored.
        for zero in ["0", "0.", "0.0", "0.000", "00", "0 "] {
            assert!(!bytes(&format!("application/octet-stream;q={zero}")), "q={zero}");
            assert!(!bytes(&format!("application/octet-stream;Q={zero}")), "Q={zero}");
        }
        for above in ["1", "1.000", "0.001", "0.0001", "0.5"] {
            assert!(bytes(&format!("application/octet-stream;q={above}")), "q={above}");
        }
        for not_a_weight in ["", ".5", "-1", "x", "0.5x", "1e-3"] {
            assert!(bytes(&format!("application/octet-stream;q={not_a_weight}")), "q={not_a_weight}");
        }
        assert!(!bytes("*/*"));
        assert!(!bytes("application/octet-streamx"));
    }
}
