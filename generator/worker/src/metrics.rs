//! The jobs' metrics, part of `GET /metrics` (Prometheus text format,
//! 0.0.4): jobs by state (read from the store when scraped), builds
//! started and finished and their durations, manifests validated. Every
//! label comes from a closed set (the job states). Kept and encoded by
//! `prometheus-client`, the Prometheus project's own Rust client; the HTTP
//! app's own metrics (requests, runs, deployments) are braid-service's,
//! and its `GET /metrics` gives both.

use braid_store::JobState;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct State {
    state: &'static str,
}

pub struct Metrics {
    registry: Registry,
    jobs: Family<State, Gauge>,
    builds_started: Counter,
    builds_succeeded: Counter,
    builds_failed: Counter,
    build_duration: Histogram,
    /// Manifests validated (CPU-heavy work, once per request or job that
    /// needs it).
    manifests_validated: Counter,
}

/// Upper bounds (seconds) of the build-duration histogram's buckets.
const BUILD_BUCKETS: [f64; 9] = [1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0];

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let jobs = Family::<State, Gauge>::default();
        registry.register("braid_jobs", "Build jobs by state", jobs.clone());
        let mut counter = |name: &str, help: &str| {
            let counter = Counter::default();
            registry.register(name, help, counter.clone());
            counter
        };
        let builds_started = counter("braid_builds_started", "Builds started");
        let builds_succeeded = counter("braid_builds_succeeded", "Builds that succeeded");
        let builds_failed = counter("braid_builds_failed", "Builds that failed or timed out");
        let manifests_validated =
            counter("braid_manifests_validated", "Manifests validated (once per request that sends one)");
        let build_duration = Histogram::new(BUILD_BUCKETS);
        registry.register("braid_build_duration_seconds", "Duration of finished builds", build_duration.clone());
        Self { registry, jobs, builds_started, builds_succeeded, builds_failed, build_duration, manifests_validated }
    }
}

impl Metrics {
    pub fn build_started(&self) {
        self.builds_started.inc();
    }

    pub fn build_finished(&self, millis: u64, ok: bool) {
        self.build_duration.observe(millis as f64 / 1000.0);
        if ok { &self.builds_succeeded } else { &self.builds_failed }.inc();
    }

    /// Counts a manifest validated.
    pub fn manifest_validated(&self) {
        self.manifests_validated.inc();
    }

    /// These metrics' part of `GET /metrics`, with `jobs` (by state, from
    /// the store): every state, those without jobs at 0.
    pub fn render(&self, jobs: &[(JobState, i64)]) -> String {
        for &state in JobState::ALL {
            let n = jobs.iter().find(|(s, _)| *s == state).map_or(0, |(_, n)| *n);
            self.jobs.get_or_create(&State { state: state.as_str() }).set(n);
        }
        text(&self.registry)
    }
}

/// `registry` in the Prometheus text format (0.0.4), which has no trailer:
/// the texts of two registries are one document.
pub fn text(registry: &Registry) -> String {
    let mut out = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut out, registry)
        .expect("writing into a String cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_state_has_a_series() {
        let m = Metrics::default();
        m.build_finished(2500, true);
        let text = m.render(&[(JobState::Running, 2)]);
        assert!(text.contains("braid_jobs{state=\"running\"} 2\n"), "{text}");
        assert!(text.contains("braid_jobs{state=\"queued\"} 0\n"), "{text}");
        assert!(text.contains("braid_builds_succeeded_total 1\n"), "{text}");
    }
}
