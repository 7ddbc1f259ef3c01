//! Work off the async threads: CPU-heavy requests (checking manifests,
//! generating crates, hashing artifacts) on blocking threads, a bounded
//! number at once with a bounded queue ([`crate::admission::Slots`];
//! beyond it, 503 + `Retry-After`).

use crate::problem::Problem;
use crate::AppState;

/// Runs `work` on a blocking thread under the server's CPU-heavy [`Slots`](crate::admission::Slots).
pub(super) async fn heavy<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Problem> {
    state.checks.bounded("heavy requests", work).await
}
