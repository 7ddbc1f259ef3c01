//! Outputs waiting for their clients to read them, bounded in all: a run's
//! output is answered only while the outputs not yet handed over fit the
//! bound (else 503), and counts whole until the connection has taken its
//! last piece or closed (pieces of one output share its allocation, so a
//! piece taken frees nothing); the connection's own deadline closes one
//! that stops reading.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Bytes;
use http_body::Frame;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::problem::Problem;

/// A piece of an output handed to the connection at a time.
const PIECE: usize = 64 << 10;

/// The bound on outputs not yet read, in bytes.
pub struct Held {
    bytes: Arc<Semaphore>,
    limit: usize,
}

impl Held {
    pub fn new(limit: usize) -> Self {
        Self { bytes: Arc::new(Semaphore::new(limit.min(Semaphore::MAX_PERMITS))), limit }
    }

    /// `output` as a response body that counts against the bound until it
    /// is handed over, or a 503 (with `Retry-After`) when it does not fit.
    pub fn hold(&self, output: Bytes) -> Result<HeldBody, Problem> {
        let permit = u32::try_from(output.len())
            .ok()
            .and_then(|n| self.bytes.clone().try_acquire_many_owned(n).ok())
            .ok_or_else(|| {
            Problem::unavailable(
                format!(
                    "the server holds {} bytes of outputs its clients have not read yet; retry shortly",
                    self.limit
                ),
                Some(1),
            )
        })?;
        Ok(HeldBody { rest: output, permit: Some(permit) })
    }
}

/// An output being handed over; its bytes count against [`Held`]'s bound
/// until the last piece is taken or the body is dropped.
pub struct HeldBody {
    rest: Bytes,
    permit: Option<OwnedSemaphorePermit>,
}

impl http_body::Body for HeldBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.rest.is_empty() {
            self.permit = None;
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
        let unread = held.hold(Bytes::from(vec![1; 150 << 10])).unwrap();
        let refused = held.hold(Bytes::from(vec![2; 100 << 10])).err().expect("over the bound");
        assert_eq!(refused.status, 503);
        drop(unread);
        let read = held.hold(Bytes::from(vec![2; 100 << 10])).unwrap();
        let second = held.hold(Bytes::from(vec![3; 100 << 10])).unwrap();
        assert_eq!(read.collect().await.unwrap().to_bytes(), vec![2; 100 << 10], "handed over whole, in pieces");
        assert!(held.hold(Bytes::from(vec![4; 100 << 10])).is_ok(), "a read output no longer counts");
        drop(second);
    }

    /// A reader that takes all but the last piece still holds the whole
    /// output (its pieces share one allocation).
    #[tokio::test]
    async fn an_output_counts_whole_until_its_last_piece_is_taken() {
        let held = Held::new(4 * PIECE);
        let mut body = held.hold(Bytes::from(vec![0; 4 * PIECE])).unwrap();
        for _ in 0..3 {
            assert_eq!(body.frame().await.unwrap().unwrap().into_data().unwrap().len(), PIECE);
            assert!(held.hold(Bytes::from_static(b"x")).is_err(), "part of a held output was counted as gone");
        }
        body.frame().await.unwrap().unwrap();
        assert!(body.frame().await.is_none());
        assert!(held.hold(Bytes::from(vec![0; 4 * PIECE])).is_ok(), "a read output no longer counts");
    }
}
