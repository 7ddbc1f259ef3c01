//! Outputs waiting for their clients to read them, bounded in all and
//! shared between tenants: a run's output is answered only while the
//! outputs not yet handed over fit the bound, or its tenant's own fit a
//! quarter of it (else 503), so that one key leaving its outputs unread
//! cannot make every other key's runs answer 503. An output counts whole
//! until the connection has taken its last piece or closed (pieces of one
//! output share its allocation, so a piece taken frees nothing); the
//! connection's own deadline closes one that stops reading.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use axum::body::Bytes;
use http_body::Frame;

use crate::problem::Problem;

/// A piece of an output handed to the connection at a time.
const PIECE: usize = 64 << 10;

/// The bound on outputs not yet read, in bytes.
pub struct Held {
    counts: Arc<Mutex<Counts>>,
    limit: usize,
}

/// Bytes held now, in all and by tenant (only tenants holding some).
#[derive(Default)]
struct Counts {
    total: usize,
    by_tenant: HashMap<String, usize>,
}

fn lock(counts: &Mutex<Counts>) -> MutexGuard<'_, Counts> {
    // The counts stay consistent whatever panicked while holding them.
    counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Held {
    pub fn new(limit: usize) -> Self {
        Self { counts: Arc::default(), limit }
    }

    /// `output` as a response body that counts against the bound until it
    /// is handed over, or a 503 (with `Retry-After`) when neither the
    /// bound nor `tenant`'s quarter of it has room. The total is at most
    /// the bound plus a quarter for each tenant (tenants are the keys the
    /// service knows, and public runs).
    pub fn hold(&self, tenant: &str, output: Bytes) -> Result<HeldBody, Problem> {
        let n = output.len();
        let mut counts = lock(&self.counts);
        let own = counts.by_tenant.get(tenant).copied().unwrap_or(0);
        if counts.total + n > self.limit && own + n > self.limit / 4 {
            return Err(Problem::unavailable(
                format!(
                    "the server holds {} bytes of outputs its clients have not read yet ({own} of them \
                     this key's); retry shortly",
                    counts.total
                ),
                Some(1),
            ));
        }
        counts.total += n;
        *counts.by_tenant.entry(tenant.to_string()).or_default() += n;
        let claim = Claim { counts: self.counts.clone(), tenant: tenant.to_string(), bytes: n };
        Ok(HeldBody { rest: output, claim: Some(claim) })
    }
}

/// An output's bytes counted against [`Held`]'s bound, until dropped.
struct Claim {
    counts: Arc<Mutex<Counts>>,
    tenant: String,
    bytes: usize,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        counts.total -= self.bytes;
        if let Some(own) = counts.by_tenant.get_mut(&self.tenant) {
            *own -= self.bytes;
            if *own == 0 {
                counts.by_tenant.remove(&self.tenant);
            }
        }
    }
}

/// An output being handed over; its bytes count against [`Held`]'s bound
/// until the last piece is taken or the body is dropped.
pub struct HeldBody {
    rest: Bytes,
    claim: Option<Claim>,
}

impl http_body::Body for HeldBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.rest.is_empty() {
            self.claim = None;
            return Poll::Ready(None);
        }
        let n = self.rest.len().min(PIECE);
        let piece = self.rest.split_to(n);
        Poll::Ready(Some(Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.rest.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    #[tokio::test]
    async fn unread_outputs_are_bounded_until_read_or_dropped() {
        let held = Held::new(200 << 10);
        let unread = held.hold("a", Bytes::from(vec![1; 150 << 10])).unwrap();
        let refused = held.hold("a", Bytes::from(vec![2; 100 << 10])).err().expect("over the bound");
        assert_eq!(refused.status, 503);
        drop(unread);
        let read = held.hold("a", Bytes::from(vec![2; 100 << 10])).unwrap();
        let second = held.hold("a", Bytes::from(vec![3; 100 << 10])).unwrap();
        assert_eq!(read.collect().await.unwrap().to_bytes(), vec![2; 100 << 10], "handed over whole, in pieces");
        assert!(held.hold("a", Bytes::from(vec![4; 100 << 10])).is_ok(), "a read output no longer counts");
        drop(second);
    }

    /// A reader that takes all but the last piece still holds the whole
    /// output (its pieces share one allocation).
    #[tokio::test]
    async fn an_output_counts_whole_until_its_last_piece_is_taken() {
        let held = Held::new(4 * PIECE);
        let mut body = held.hold("a", Bytes::from(vec![0; 4 * PIECE])).unwrap();
        for _ in 0..3 {
            assert_eq!(body.frame().await.unwrap().unwrap().into_data().unwrap().len(), PIECE);
            assert!(held.hold("a", Bytes::from_static(b"x")).is_err(), "part of a held output was counted as gone");
        }
        body.frame().await.unwrap().unwrap();
        assert!(body.frame().await.is_none());
        assert!(held.hold("a", Bytes::from(vec![0; 4 * PIECE])).is_ok(), "a read output no longer counts");
    }

    /// A key that leaves its outputs unread fills the bound for itself
    /// only: another key still has a quarter of it.
    #[tokio::test]
    async fn a_key_holding_the_whole_bound_leaves_a_quarter_to_each_other_key() {
        let held = Held::new(400);
        let unread: Vec<HeldBody> = (0..4).map(|_| held.hold("a", Bytes::from(vec![1; 100])).unwrap()).collect();
        let refused = held.hold("a", Bytes::from(vec![1; 1])).err().expect("over the bound, and over a's quarter");
        assert!(
            refused.detail.contains("400 bytes") && refused.detail.contains("400 of them this key's"),
            "{}",
            refused.detail
        );
        let other = held.hold("b", Bytes::from(vec![2; 100])).expect("b's quarter");
        assert!(held.hold("b", Bytes::from(vec![2; 1])).is_err(), "b past its quarter, the bound full");
        let _c = held.hold("c", Bytes::from(vec![3; 100])).expect("c's own quarter");
        drop(unread);
        drop(other);
        let counts = lock(&held.counts);
        assert_eq!(counts.total, 100, "c's output still held");
        assert_eq!(counts.by_tenant.keys().collect::<Vec<_>>(), ["c"]);
    }
}
