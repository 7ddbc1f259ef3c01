//! Admission: a bounded number of units of work at once, a bounded queue
//! behind them, and a 503 problem with `Retry-After` past that. The
//! service's CPU-heavy requests (`AppState::checks`) take turns in one;
//! runs of components, which tenants share, in [`crate::fair`].

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::problem::Problem;

/// Bounds the CPU-heavy requests: `running` at once on blocking threads,
/// up to `queued` more waiting for them; beyond that, 503 + `Retry-After`.
pub struct Slots {
    running: Arc<Semaphore>,
    pub(crate) admitted: Arc<Semaphore>,
    limit: usize,
}

impl Slots {
    pub fn new(running: usize, queued: usize) -> Self {
        let running = running.max(1);
        Self {
            running: Arc::new(Semaphore::new(running)),
            admitted: Arc::new(Semaphore::new(running + queued)),
            limit: running + queued,
        }
    }
}

impl Slots {
    /// Runs `work` on a blocking thread once a slot is free, or refuses it
    /// (503 + `Retry-After`) when the queue is full; `what` names the
    /// requests in the refusal.
    pub(crate) async fn bounded<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Problem> {
        let slot = self.slot(what).await?;
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work()
        })
        .await
        .map_err(Problem::internal)
    }

    /// A slot, once one is free (held until the [`Slot`] is dropped), or
    /// a refusal (503 + `Retry-After`) when the queue is full: for work
    /// that runs on the async threads and yields ([`crate::execute`]).
    pub(crate) async fn slot(&self, what: &str) -> Result<Slot, Problem> {
        let admitted = self.admitted.clone().try_acquire_owned().map_err(|_| {
            Problem::unavailable(
                format!("the server is busy ({} {what} in progress or waiting); retry shortly", self.limit),
                Some(1),
            )
        })?;
        let running = self.running.clone().acquire_owned().await.map_err(Problem::internal)?;
        Ok(Slot { _permits: (admitted, running) })
    }
}

/// A slot of [`Slots`], given back when dropped.
pub(crate) struct Slot {
    _permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
}
