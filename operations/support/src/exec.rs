//! Running an operation's future without an async executor: Braid's
//! operations do not suspend, so one poll finishes them. This is how
//! `no_std` users and synchronous Wasm entry points drive them.

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

/// Polls `future` once with a no-op waker: `Some(output)` if it completed,
/// `None` if it is waiting on something (then an executor is needed).
pub fn now_or_never<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_futures_complete_and_pending_ones_do_not() {
        assert_eq!(now_or_never(async { 7 }), Some(7));
        assert_eq!(now_or_never(core::future::pending::<()>()), None);
    }
}
