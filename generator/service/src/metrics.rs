//! The HTTP app's metrics, with the jobs' (braid-worker's) the text of
//! `GET /metrics` (Prometheus text format, 0.0.4): requests by method,
//! route and status, submissions answered from an earlier build or joining
//! one, crates rendered, runs by outcome and their durations, where run
//! programs came from; runs by deployment. Every label comes from a closed
//! set (the standard methods or `other`, the route templates or
//! `unmatched`, the statuses the server answers with, outcomes and sources
//! named here), or for deployments, whose names keys make, a bounded one
//! ([`MAX_DEPLOYMENT_LABELS`]), so no request can add a series. Kept and
//! encoded by `prometheus-client`, the Prometheus project's own Rust client.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
/// The method label of a request's method (its text): a standard method,
/// else `other`.
pub fn method_label(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "OPTIONS" => "OPTIONS",
        "CONNECT" => "CONNECT",
        "TRACE" => "TRACE",
        _ => "other",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Request {
    method: &'static str,
    /// A route template of the router, or `unmatched`.
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    /// `ok`, `failed`, `time`, `memory`, `output`, `input`, `trap`.
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeploymentOutcome {
    /// A [`AppMetrics::deployment_label`].
    deployment: String,
    /// A run's (see [`Outcome`]), or `refused` by the deployment's cap.
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Deployment {
    /// A [`AppMetrics::deployment_label`].
    deployment: String,
}

/// Deployments with series of their own, at most, in one process: names
/// are made by keys, not requests, but a key could make many. Past them,
/// [`OTHER_DEPLOYMENTS`] counts the rest together.
pub const MAX_DEPLOYMENT_LABELS: usize = 100;

/// The deployment label of the runs of deployments past
/// [`MAX_DEPLOYMENT_LABELS`] (no deployment's name: `_` is not in one).
pub const OTHER_DEPLOYMENTS: &str = "_other";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Source {
    /// `memory`, `precompiled` (the disk cache), `compiled`.
    source: &'static str,
}

/// The HTTP app's metrics (`AppState::app_metrics`).
pub struct AppMetrics {
    registry: Registry,
    requests: Family<Request, Counter>,
    /// `POST /v1/workflows` answered from an earlier build.
    cache_hits: Counter,
    /// `POST /v1/workflows` that joined a build under way.
    joined: Counter,
    /// Crates rendered (CPU-heavy work, once per request that needs one).
    crates_rendered: Counter,
    runs: Family<Outcome, Counter>,
    run_duration: Histogram,
    programs: Family<Source, Counter>,
    deployment_runs: Family<DeploymentOutcome, Counter>,
    deployment_run_duration: Family<Deployment, Histogram, fn() -> Histogram>,
    deployment_in_progress: Family<Deployment, Gauge>,
    /// The deployments with a label of their own.
    deployment_labels: Mutex<HashSet<String>>,
}

/// Upper bounds (seconds) of the run-duration histogram's buckets.
const RUN_BUCKETS: [f64; 8] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 1.0];

impl Default for AppMetrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<Request, Counter>::default();
        registry.register("braid_http_requests", "HTTP requests by method, route and status", requests.clone());
        let counter = |registry: &mut Registry, name: &str, help: &str| {
            let counter = Counter::default();
            registry.register(name, help, counter.clone());
            counter
        };
        let cache_hits = counter(&mut registry, "braid_cache_hits", "Submissions answered from an earlier build");
        let joined = counter(&mut registry, "braid_joined_builds", "Submissions that joined a build under way");
        let crates_rendered = counter(
            &mut registry,
            "braid_crates_rendered",
            "Generated crates rendered here (once per request that needs one)",
        );
        let runs = Family::<Outcome, Counter>::default();
        registry.register(
            "braid_runs",
            "Runs of built workflows by outcome (time, memory and output: budget kills)",
            runs.clone(),
        );
        let run_duration = Histogram::new(RUN_BUCKETS);
        registry.register(
            "braid_run_duration_seconds",
            "Duration of runs (instantiation included)",
            run_duration.clone(),
        );
        let programs = Family::<Source, Counter>::default();
        registry.register(
            "braid_run_programs",
            "Programs of runs by source (memory and precompiled: cache hits)",
            programs.clone(),
        );
        let deployment_runs = Family::<DeploymentOutcome, Counter>::default();
        registry.register(
            "braid_deployment_runs",
            "Runs of deployments by deployment (lower case; _other past the first 100) and outcome",
            deployment_runs.clone(),
        );
        let deployment_run_duration: Family<Deployment, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(RUN_BUCKETS));
        registry.register(
            "braid_deployment_run_duration_seconds",
            "Duration of runs of deployments, by deployment",
            deployment_run_duration.clone(),
        );
        let deployment_in_progress = Family::<Deployment, Gauge>::default();
        registry.register(
            "braid_deployment_runs_in_progress",
            "Runs of deployments in progress in this process, by deployment",
            deployment_in_progress.clone(),
        );
        Self {
            registry,
            requests,
            cache_hits,
            joined,
            crates_rendered,
            runs,
            run_duration,
            programs,
            deployment_runs,
            deployment_run_duration,
            deployment_in_progress,
            deployment_labels: Mutex::default(),
        }
    }
}

/// How a run of the executor ended, as its metrics label it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    Ok,
    /// The workflow failed (an operation's error).
    Failed,
    /// Over its time budget.
    Time,
    /// Over its memory budget.
    Memory,
    /// Its output over the output budget.
    Output,
    /// Its input refused (too large, or not what the workflow takes).
    Input,
    /// A trap.
    Trap,
}

impl RunOutcome {
    fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Time => "time",
            Self::Memory => "memory",
            Self::Output => "output",
            Self::Input => "input",
            Self::Trap => "trap",
        }
    }
}

impl AppMetrics {
    /// Counts a request. `route` is a route template of the router (a
    /// `&'static str`, so it cannot come from the request).
    pub fn request(&self, method: &str, route: &'static str, status: u16) {
        self.requests.get_or_create(&Request { method: method_label(method), route, status }).inc();
    }

    /// Counts a submission answered from an earlier build.
    pub fn cache_hit(&self) {
        self.cache_hits.inc();
    }

    /// Counts a submission that joined a build under way.
    pub fn joined(&self) {
        self.joined.inc();
    }

    /// Counts a generated crate rendered.
    pub fn crate_rendered(&self) {
        self.crates_rendered.inc();
    }

    /// Counts a run of the executor that took `took` and ended so; under
    /// its deployment's label too, for a run of one.
    pub fn run(&self, took: std::time::Duration, outcome: RunOutcome, deployment: Option<&str>) {
        let outcome = outcome.label();
        self.runs.get_or_create(&Outcome { outcome }).inc();
        self.run_duration.observe(took.as_secs_f64());
        if let Some(deployment) = deployment {
            let deployment = deployment.to_string();
            self.deployment_run_duration
                .get_or_create(&Deployment { deployment: deployment.clone() })
                .observe(took.as_secs_f64());
            self.deployment_runs.get_or_create(&DeploymentOutcome { deployment, outcome }).inc();
        }
    }

    /// Counts a run of a deployment refused by its cap on runs at once
    /// (`outcome="refused"`), under its label.
    pub fn deployment_refused(&self, deployment: &str) {
        let deployment = deployment.to_string();
        self.deployment_runs.get_or_create(&DeploymentOutcome { deployment, outcome: "refused" }).inc();
    }

    /// The label of deployment `name`'s series: its name in lower case,
    /// for the first [`MAX_DEPLOYMENT_LABELS`] deployments run here, else
    /// [`OTHER_DEPLOYMENTS`].
    pub fn deployment_label(&self, name: &str) -> String {
        let key = braid_store::deployment_key(name);
        let mut labels = self.deployment_labels.lock().unwrap_or_else(PoisonError::into_inner);
        if labels.contains(&key) || labels.len() < MAX_DEPLOYMENT_LABELS {
            labels.insert(key.clone());
            key
        } else {
            OTHER_DEPLOYMENTS.to_string()
        }
    }

    /// Counts where a run's program came from.
    pub fn program(&self, source: &'static str) {
        self.programs.get_or_create(&Source { source }).inc();
    }

    /// These metrics' part of `GET /metrics`, with the runs of deployments
    /// in progress (by name in lower case).
    pub fn render(&self, deployment_runs: &[(String, usize)]) -> String {
        let mut in_progress: HashMap<String, i64> = HashMap::new();
        for (name, n) in deployment_runs {
            *in_progress.entry(self.deployment_label(name)).or_default() += *n as i64;
        }
        let mut labels = self.deployment_labels.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if labels.len() >= MAX_DEPLOYMENT_LABELS {
            labels.insert(OTHER_DEPLOYMENTS.to_string());
        }
        for deployment in labels {
            let n = in_progress.get(&deployment).copied().unwrap_or(0);
            self.deployment_in_progress.get_or_create(&Deployment { deployment }).set(n);
        }
        braid_worker::metrics::text(&self.registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_a_closed_set() {
        let m = AppMetrics::default();
        for i in 0..100 {
            m.request(&format!("X{}", "A".repeat(i)), "unmatched", 405);
        }
        m.request("GET", "/healthz", 200);
        let text = m.render(&[]);
        assert!(
            text.contains("braid_http_requests_total{method=\"other\",route=\"unmatched\",status=\"405\"} 100"),
            "{text}"
        );
        assert!(
            text.contains("braid_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1"),
            "{text}"
        );
        assert_eq!(text.matches("braid_http_requests_total{").count(), 2, "{text}");
    }

    #[test]
    fn deployments_have_series_of_their_own_up_to_a_bound() {
        let m = AppMetrics::default();
        let took = std::time::Duration::from_millis(2);
        for i in 0..MAX_DEPLOYMENT_LABELS + 50 {
            let label = m.deployment_label(&format!("Name-{i}"));
            m.run(took, RunOutcome::Ok, Some(&label));
        }
        // One name in any case is one deployment; past the bound, `_other`.
        assert_eq!(m.deployment_label("NAME-0"), "name-0");
        assert_eq!(m.deployment_label("name-120"), OTHER_DEPLOYMENTS);
        let text = m.render(&[("name-3".into(), 2), ("name-130".into(), 1), ("name-140".into(), 4)]);
        let series = |metric: &str| text.lines().filter(|l| l.starts_with(&format!("{metric}{{"))).count();
        assert_eq!(series("braid_deployment_runs_total"), MAX_DEPLOYMENT_LABELS + 1, "{text}");
        assert!(text.contains("braid_deployment_runs_total{deployment=\"name-7\",outcome=\"ok\"} 1\n"), "{text}");
        assert!(text.contains("braid_deployment_runs_total{deployment=\"_other\",outcome=\"ok\"} 50\n"), "{text}");
        assert!(text.contains("braid_deployment_runs_in_progress{deployment=\"name-3\"} 2\n"), "{text}");
        assert!(text.contains("braid_deployment_runs_in_progress{deployment=\"_other\"} 5\n"), "{text}");
        assert!(text.contains("braid_deployment_runs_in_progress{deployment=\"name-4\"} 0\n"), "{text}");
        // Runs over, every gauge back at 0.
        let text = m.render(&[]);
        assert!(text.contains("braid_deployment_runs_in_progress{deployment=\"name-3\"} 0\n"), "{text}");
        assert!(text.contains("braid_deployment_runs_in_progress{deployment=\"_other\"} 0\n"), "{text}");
    }
}
