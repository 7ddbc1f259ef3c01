//! Work off the async threads: CPU-heavy requests (checking manifests,
//! generating crates, hashing artifacts) on blocking threads, a bounded
//! number at once with a bounded queue ([`crate::admission::Slots`];
//! beyond it, 503 + `Retry-After`), and store calls (SQLite blocks).

use crate::problem::Problem;
use crate::store::{Store, StoreError};
use crate::AppState;

/// Runs `work` on a blocking thread under the server's CPU-heavy [`Slots`](crate::admission::Slots).
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
