//! Work off the async threads: CPU-heavy requests (checking manifests,
//! generating crates, hashing artifacts) on blocking threads, a bounded
//! number at once with a bounded queue ([`Checks`]; beyond it, 503 +
//! `Retry-After`), and store calls (SQLite blocks).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::problem::Problem;
use crate::store::{Store, StoreError};
use crate::AppState;

/// Bounds the CPU-heavy requests: `running` at once on blocking threads,
/// up to `queued` more waiting for them; beyond that, 503 + `Retry-After`.
pub struct Checks {
    running: Arc<Semaphore>,
    pub(super) admitted: Arc<Semaphore>,
    limit: usize,
}

impl Checks {
    pub fn new(running: usize, queued: usize) -> Self {
        let running = running.max(1);
        Self {
            running: Arc::new(Semaphore::new(running)),
            admitted: Arc::new(Semaphore::new(running + queued)),
            limit: running + queued,
        }
    }
}

impl Checks {
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

/// A slot of [`Checks`], given back when dropped.
pub(crate) struct Slot {
    _permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
}

/// Runs `work` on a blocking thread under the server's [`Checks`].
pub(super) async fn heavy<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Problem> {
    state.checks.bounded("heavy requests", work).await
}

/// Runs a store call off the async threads.
pub(super) async fn with_store<T, F>(state: &AppState, f: F) -> Result<T, Problem>
where
    T: Send + 'static,
    F: FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
{
    let store = state.store.clone();
    tokio::task::spawn_blocking(move || f(&*store)).await.map_err(Problem::internal)?.map_err(Problem::from_store)
}
