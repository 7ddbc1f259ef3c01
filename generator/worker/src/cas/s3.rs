//! The artifact store's S3 backend: objects `artifacts/<cid>` in a bucket
//! of any S3-compatible store (AWS S3, Garage, MinIO, Ceph). One PUT per
//! object, so a reader sees it whole or not at all (an interrupted upload
//! leaves nothing); `If-None-Match: *` where the store enforces it (Garage
//! does not: correctness never rests on it, the keys are content
//! addresses, so a second writer writes the same bytes). Reads are
//! verified by [`super::Cas`].
//!
//! Why rusty-s3 and ureq rather than the AWS SDK or object_store: the
//! store's calls block (they run off the async threads, as the directory
//! backend's do), and a request signer plus a small blocking client is all
//! they need: a handful of crates instead of the SDK's two hundred and an
//! async runtime of its own.

use std::time::Duration;

use braid_store::ids::ContentId;
use url::Url;

/// Largest object read back: far above any artifact the service writes.
const MAX_OBJECT: u64 = 1 << 30;
/// How long a signed request stays valid.
const SIGNED_FOR: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    #[error(
        "--store {0:?}: expected s3://BUCKET?endpoint=URL[,URL...]&region=REGION (endpoint: the S3 API's http(s) \
         URL, several for failover; region: default us-east-1)"
    )]
    Url(String),
    #[error("--store {0}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the bucket's access key")]
    Credentials(String),
    #[error("{store}: {op} {key}: {source}")]
    Transport { store: String, op: &'static str, key: String, source: Box<ureq::Error> },
    #[error("{store}: {op} {key} answered {status}: {body}{hint}")]
    Status { store: String, op: &'static str, key: String, status: u16, body: String, hint: &'static str },
}

impl S3Error {
    /// What went wrong without the store's address, bucket or keys: for
    /// answers to anonymous callers (`/healthz`); the log has the rest.
    pub fn brief(&self) -> String {
        match self {
            Self::Url(_) => "the --store URL is not usable".into(),
            Self::Credentials(_) => "no credentials for the store".into(),
            Self::Transport { op, .. } => format!("{op}: no endpoint of the store answered"),
            Self::Status { op, status, hint, .. } => format!("{op} answered {status}{hint}"),
        }
    }
}

/// A bucket and the endpoints that serve it: `--store s3://...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub name: String,
    pub endpoints: Vec<Url>,
    pub region: String,
}

impl Bucket {
    /// `s3://BUCKET?endpoint=URL[,URL...]&region=REGION`.
    pub fn parse(s: &str) -> Result<Self, S3Error> {
        // Never echo credentials someone put in the URL (or an endpoint's).
        let shown = if s.contains('@') { "s3://(credentials removed)" } else { s };
        let bad = || S3Error::Url(shown.to_string());
        let url = Url::parse(s).map_err(|_| bad())?;
        let name = url.host_str().filter(|n| valid_bucket(n)).ok_or_else(bad)?.to_string();
        let userinfo = !url.username().is_empty() || url.password().is_some();
        if url.scheme() != "s3" || !matches!(url.path(), "" | "/") || userinfo {
            return Err(bad());
        }
        let (mut endpoints, mut region) = (Vec::new(), None);
        for (k, v) in url.query_pairs() {
            match &*k {
                "endpoint" => {
                    for e in v.split(',') {
                        let e = Url::parse(e.trim()).map_err(|_| bad())?;
                        let userinfo = !e.username().is_empty() || e.password().is_some();
                        if !matches!(e.scheme(), "http" | "https") || e.host().is_none() || userinfo {
                            return Err(bad());
                        }
                        endpoints.push(e);
                    }
                }
                "region" if !v.is_empty() => region = Some(v.into_owned()),
                _ => return Err(bad()),
            }
        }
        let region = region.unwrap_or_else(|| "us-east-1".to_string());
        if endpoints.is_empty() {
            endpoints.push(Url::parse(&format!("https://s3.{region}.amazonaws.com")).map_err(|_| bad())?);
        }
        Ok(Self { name, endpoints, region })
    }
}

/// S3's rule for bucket names (3 to 63 of a-z, 0-9, `.`, `-`).
fn valid_bucket(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
}

impl std::fmt::Display for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let endpoints: Vec<&str> = self.endpoints.iter().map(|e| e.as_str().trim_end_matches('/')).collect();
        write!(f, "s3://{}?endpoint={}&region={}", self.name, endpoints.join(","), self.region)
    }
}

/// The key of an artifact.
pub(super) fn artifact_key(cid: &ContentId) -> String {
    format!("artifacts/{cid}")
}

/// An open S3 store.
pub(super) struct S3 {
    location: Bucket,
    /// One signer per endpoint, tried in order from `current`.
    buckets: Vec<rusty_s3::Bucket>,
    /// The endpoint that answered last: requests start there, so that a
    /// node that is down (or, worse, drops packets until the connect
    /// timeout) costs one failover, not one per request.
    current: std::sync::atomic::AtomicUsize,
    credentials: rusty_s3::Credentials,
    agent: ureq::Agent,
}

impl std::fmt::Debug for S3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3").field("location", &self.location).finish_non_exhaustive()
    }
}

enum Method<'a> {
    Put(&'a [u8]),
    Get,
    Delete,
}

impl Method<'_> {
    fn name(&self) -> &'static str {
        match self {
            Self::Put(_) => "PUT",
            Self::Get => "GET",
            Self::Delete => "DELETE",
        }
    }
}

/// The pauses before [`S3::send`] tries busy endpoints again.
const BUSY_PAUSES: [Duration; 2] = [Duration::from_millis(200), Duration::from_secs(1)];

impl S3 {
    /// Opens the bucket with the credentials of the environment and checks
    /// that it takes a write, so that a wrong endpoint, key or bucket stops
    /// the process at start and says so.
    pub(super) fn open(location: Bucket) -> Result<Self, S3Error> {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let (Some(key), Some(secret)) = (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) else {
            return Err(S3Error::Credentials(location.to_string()));
        };
        let credentials = match var("AWS_SESSION_TOKEN") {
            Some(token) => rusty_s3::Credentials::new_with_token(key, secret, token),
            None => rusty_s3::Credentials::new(key, secret),
        };
        let s3 = Self::new(location, credentials)?;
        s3.probe()?;
        Ok(s3)
    }

    /// The bucket at its endpoints, with `credentials`; not probed.
    fn new(location: Bucket, credentials: rusty_s3::Credentials) -> Result<Self, S3Error> {
        let buckets = location
            .endpoints
            .iter()
            .map(|e| {
                rusty_s3::Bucket::new(
                    e.clone(),
                    rusty_s3::UrlStyle::Path,
                    location.name.clone(),
                    location.region.clone(),
                )
                .map_err(|_| S3Error::Url(location.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            // A node that takes the request and hangs: the next endpoint.
            .timeout_recv_response(Some(Duration::from_secs(30)))
            .timeout_global(Some(Duration::from_secs(300)))
            .build()
            .into();
        Ok(Self { location, buckets, current: 0.into(), credentials, agent })
    }

    /// Sends `method` on `key` to the first endpoint that answers, from
    /// the one that answered last; the status and body of the answer. When
    /// every endpoint answers 5xx (S3's `503 SlowDown`, nodes overloaded),
    /// tries them all again after a pause, twice.
    fn send(&self, method: &Method, key: &str) -> Result<(u16, Vec<u8>), S3Error> {
        let mut result = self.round(method, key);
        for pause in BUSY_PAUSES {
            if !matches!(result, Err(S3Error::Status { status: 500.., .. })) {
                break;
            }
            std::thread::sleep(pause);
            result = self.round(method, key);
        }
        result
    }

    /// One round of [`S3::send`] over the endpoints.
    fn round(&self, method: &Method, key: &str) -> Result<(u16, Vec<u8>), S3Error> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut failure = None;
        let first = self.current.load(Relaxed);
        for i in (0..self.buckets.len()).map(|n| (first + n) % self.buckets.len()) {
            let bucket = &self.buckets[i];
            let creds = Some(&self.credentials);
            let answer = match method {
                Method::Put(bytes) => {
                    let url = rusty_s3::S3Action::sign(&bucket.put_object(creds, key), SIGNED_FOR);
                    self.agent.put(url.as_str()).header("if-none-match", "*").send(*bytes)
                }
                Method::Get => {
                    let url = rusty_s3::S3Action::sign(&bucket.get_object(creds, key), SIGNED_FOR);
                    self.agent.get(url.as_str()).call()
                }
                Method::Delete => {
                    let url = rusty_s3::S3Action::sign(&bucket.delete_object(creds, key), SIGNED_FOR);
                    self.agent.delete(url.as_str()).call()
                }
            };
            let read = answer.and_then(|r| {
                let status = r.status().as_u16();
                r.into_body().with_config().limit(MAX_OBJECT).read_to_vec().map(|body| (status, body))
            });
            match read {
                // A node that is down or cut off: the next endpoint.
                Ok((status, _)) if status >= 500 => failure = Some(Err(self.status(method, key, status, Vec::new()))),
                Ok(answer) => {
                    self.current.store(i, Relaxed);
                    return Ok(answer);
                }
                Err(e) => {
                    failure = Some(Err(S3Error::Transport {
                        store: self.location.to_string(),
                        op: method.name(),
                        key: key.to_string(),
                        source: Box::new(e),
                    }))
                }
            }
        }
        failure.expect("a bucket has an endpoint")
    }

    fn status(&self, method: &Method, key: &str, status: u16, body: Vec<u8>) -> S3Error {
        let hint = match status {
            403 => " (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the key's permissions on the bucket)",
            404 => " (does the bucket exist?)",
            _ => "",
        };
        let body = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        S3Error::Status {
            store: self.location.to_string(),
            op: method.name(),
            key: key.to_string(),
            status,
            body,
            hint,
        }
    }

    /// Writes `bytes` as `key`, whole or not at all.
    pub(super) fn put(&self, key: &str, bytes: &[u8]) -> Result<(), S3Error> {
        let method = Method::Put(bytes);
        match self.send(&method, key)? {
            // 412: the store enforces `If-None-Match` and has the object.
            (200 | 412, _) => Ok(()),
            (status, body) => Err(self.status(&method, key, status, body)),
        }
    }

    /// The bytes stored as `key`, as they are; `None` if absent.
    pub(super) fn get(&self, key: &str) -> Result<Option<Vec<u8>>, S3Error> {
        match self.send(&Method::Get, key)? {
            (200, body) => Ok(Some(body)),
            (404, body) if String::from_utf8_lossy(&body).contains("NoSuchKey") || body.is_empty() => Ok(None),
            (status, body) => Err(self.status(&Method::Get, key, status, body)),
        }
    }

    pub(super) fn delete(&self, key: &str) -> Result<(), S3Error> {
        match self.send(&Method::Delete, key)? {
            (200 | 204 | 404, _) => Ok(()),
            (status, body) => Err(self.status(&Method::Delete, key, status, body)),
        }
    }

    /// A small object written and removed.
    pub(super) fn probe(&self) -> Result<(), S3Error> {
        let key = format!("probe/{}", uuid::Uuid::new_v4().simple());
        self.put(&key, b"braid")?;
        self.delete(&key)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};

    use super::*;

    /// A loopback server that answers its connections with `statuses`,
    /// one request each, in order (a 200 carries the body `hello`); the
    /// bucket it serves.
    fn scripted(statuses: &'static [u16]) -> (Bucket, std::thread::JoinHandle<()>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            for &status in statuses {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 2 {
                    line.clear();
                }
                let body = if status == 200 { "hello" } else { "" };
                let answer =
                    format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                reader.get_mut().write_all(answer.as_bytes()).unwrap();
            }
        });
        (Bucket::parse(&format!("s3://bkt?endpoint=http://127.0.0.1:{port}&region=r")).unwrap(), server)
    }

    #[test]
    fn a_busy_store_is_asked_again_after_a_pause_twice() {
        let credentials = || rusty_s3::Credentials::new("key", "secret");
        let (bucket, server) = scripted(&[503, 500, 200]);
        let s3 = S3::new(bucket, credentials()).unwrap();
        assert_eq!(s3.get("k").unwrap().as_deref(), Some(&b"hello"[..]));
        server.join().unwrap();
        let (bucket, server) = scripted(&[503, 503, 503]);
        let s3 = S3::new(bucket, credentials()).unwrap();
        let err = s3.get("k").unwrap_err();
        assert!(matches!(err, S3Error::Status { status: 503, .. }), "{err}");
        // What anonymous callers see of it: not where the store is.
        assert!(err.to_string().contains("127.0.0.1"));
        assert_eq!(err.brief(), "GET answered 503");
        server.join().unwrap();
        // Not a 5xx: answered at once.
        let (bucket, server) = scripted(&[403]);
        let s3 = S3::new(bucket, credentials()).unwrap();
        assert!(matches!(s3.get("k").unwrap_err(), S3Error::Status { status: 403, .. }));
        server.join().unwrap();
    }

    #[test]
    fn parses_store_urls() {
        let b = Bucket::parse("s3://braid?endpoint=http://127.0.0.1:3900,http://127.0.0.1:3910&region=garage").unwrap();
        assert_eq!(b.name, "braid");
        assert_eq!(b.region, "garage");
        assert_eq!(b.endpoints.len(), 2);
        assert_eq!(b.to_string(), "s3://braid?endpoint=http://127.0.0.1:3900,http://127.0.0.1:3910&region=garage");
        assert_eq!(Bucket::parse(&b.to_string()).unwrap(), b);
        let aws = Bucket::parse("s3://my-bucket").unwrap();
        assert_eq!(aws.endpoints[0].as_str(), "https://s3.us-east-1.amazonaws.com/");
        for bad in [
            "s3://",
            "s3://UPPER",
            "s3://b/path",
            "s3://user:secret@bucket",
            "s3://bucket?endpoint=ftp://x",
            "s3://bucket?endpoint=http://key:secret@host",
            "s3://bucket?endpoint=not a url",
            "s3://bucket?unknown=1",
            "http://bucket",
        ] {
            let err = Bucket::parse(bad).unwrap_err().to_string();
            assert!(err.contains("expected s3://BUCKET?endpoint="), "{bad}: {err}");
        }
    }

    /// Against a real S3-compatible store: `make test-s3` starts Garage and
    /// sets BRAID_TEST_S3 (a --store URL) and the credentials.
    #[test]
    #[ignore = "needs an S3 store: make test-s3"]
    fn against_a_real_store() {
        use crate::cas::{Cas, CasError, Location};
        let url = std::env::var("BRAID_TEST_S3").expect("BRAID_TEST_S3: a --store URL");
        let Location::S3(bucket) = Location::parse(&url).unwrap() else { panic!("not an s3:// URL") };
        let cas = Cas::open(&Location::S3(bucket.clone())).unwrap();
        let bytes = format!("artifact {}", uuid::Uuid::new_v4()).into_bytes();
        let cid = cas.put(&bytes).unwrap();
        assert_eq!(cas.put(&bytes).unwrap(), cid, "a second put of the same bytes");
        assert_eq!(cas.get(&cid).unwrap().unwrap(), bytes);
        assert!(cas.get(&ContentId::of(b"never stored")).unwrap().is_none());
        cas.probe().unwrap();

        // Damaged in the store: refused, then removed.
        let raw = S3::open(bucket.clone()).unwrap();
        raw.put(&artifact_key(&cid), b"damaged").unwrap();
        assert!(matches!(cas.get(&cid), Err(CasError::Corrupt(_))));
        cas.remove(&cid);
        assert!(cas.get(&cid).unwrap().is_none());

        // An endpoint that is down: the next one serves.
        let mut failover = bucket.clone();
        failover.endpoints.insert(0, Url::parse("http://127.0.0.1:9").unwrap());
        let cas = Cas::open(&Location::S3(failover.clone())).unwrap();
        assert_eq!(cas.get(&cas.put(b"failover").unwrap()).unwrap().unwrap(), b"failover");
        let raw = S3::open(failover).unwrap();
        let current = || raw.current.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(current(), 1, "after the probe, requests start at the endpoint that answered");
        raw.get(&artifact_key(&cid)).unwrap();
        assert_eq!(current(), 1);

        // A bucket that does not exist, and wrong credentials: errors that say what to check.
        let missing = Bucket { name: format!("absent-{}", uuid::Uuid::new_v4().simple()), ..bucket.clone() };
        let err = S3::open(missing).unwrap_err().to_string();
        assert!(err.contains("does the bucket exist?") || err.contains("403"), "{err}");
        let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap();
        // SAFETY: this test alone reads these variables after this point.
        unsafe { std::env::set_var("AWS_SECRET_ACCESS_KEY", "0".repeat(64)) };
        let err = S3::open(bucket).unwrap_err().to_string();
        unsafe { std::env::set_var("AWS_SECRET_ACCESS_KEY", secret) };
        assert!(err.contains("403") && err.contains("check AWS_ACCESS_KEY_ID"), "{err}");
    }
}
