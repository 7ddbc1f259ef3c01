//! Counters for `GET /metrics` (Prometheus text format): requests by method,
//! route and status, builds started and their durations, cache hits; jobs
//! by state are read from the store when scraped. Every label comes from a
//! closed set (the standard methods or `other`, the route templates or
//! `unmatched`, the statuses the server answers with), so no request can
//! add a series.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::store::JobState;

/// The method label: a standard method, else `other`.
pub fn method_label(method: &axum::http::Method) -> &'static str {
    match method.as_str() {
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

#[derive(Default)]
pub struct Metrics {
    /// (method label, route template or `unmatched`, status).
    requests: Mutex<BTreeMap<(&'static str, &'static str, u16), u64>>,
    pub builds_started: AtomicU64,
    pub builds_succeeded: AtomicU64,
    pub builds_failed: AtomicU64,
    build_millis_sum: AtomicU64,
    build_count: AtomicU64,
    /// `POST /v1/workflows` answered from an earlier build.
    pub cache_hits: AtomicU64,
    /// `POST /v1/workflows` that joined a build under way.
    pub joined: AtomicU64,
    /// Runs by outcome (`ok`, `failed`, `time`, `memory`, `output`,
    /// `input`, `trap`), and the histogram of their durations.
    runs: Mutex<BTreeMap<&'static str, u64>>,
    run_buckets: [AtomicU64; RUN_BUCKETS.len()],
    run_micros_sum: AtomicU64,
    /// Where each run's program came from (`memory`, `precompiled`: the
    /// disk cache, `compiled`).
    programs: Mutex<BTreeMap<&'static str, u64>>,
}

/// Upper bounds (seconds) of the run-duration histogram's buckets.
const RUN_BUCKETS: [f64; 8] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 1.0];

impl Metrics {
    /// Counts a request. `route` is a route template of the router (a
    /// `&'static str`, so it cannot come from the request).
    pub fn request(&self, method: &axum::http::Method, route: &'static str, status: u16) {
        let mut map = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry((method_label(method), route, status)).or_default() += 1;
    }

    pub fn build_finished(&self, millis: u64, ok: bool) {
        self.build_millis_sum.fetch_add(millis, Ordering::Relaxed);
        self.build_count.fetch_add(1, Ordering::Relaxed);
        if ok { &self.builds_succeeded } else { &self.builds_failed }.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a run of the executor that took `took` and ended in `error`.
    pub fn run(&self, took: std::time::Duration, error: Option<&braid_engine::RunError>) {
        use braid_engine::RunError as E;
        let outcome = match error {
            None => "ok",
            Some(E::Workflow { .. }) => "failed",
            Some(E::Time(_)) => "time",
            Some(E::Memory(_)) => "memory",
            Some(E::OutputTooLarge { .. }) => "output",
            Some(E::InputTooLarge { .. } | E::BadInput(_)) => "input",
            Some(E::Trap(_)) => "trap",
        };
        *self.runs.lock().unwrap_or_else(|e| e.into_inner()).entry(outcome).or_default() += 1;
        let seconds = took.as_secs_f64();
        for (bucket, bound) in self.run_buckets.iter().zip(RUN_BUCKETS) {
            if seconds <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.run_micros_sum.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// Counts where a run's program came from.
    pub fn program(&self, source: &'static str) {
        *self.programs.lock().unwrap_or_else(|e| e.into_inner()).entry(source).or_default() += 1;
    }

    pub fn render(&self, jobs: &[(JobState, i64)]) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# HELP braid_http_requests_total HTTP requests by method, route and status.");
        let _ = writeln!(out, "# TYPE braid_http_requests_total counter");
        for ((method, route, status), n) in self.requests.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(
                out,
                "braid_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        let _ = writeln!(out, "# HELP braid_jobs Build jobs by state.");
        let _ = writeln!(out, "# TYPE braid_jobs gauge");
        for &state in JobState::ALL {
            let n = jobs.iter().find(|(s, _)| *s == state).map_or(0, |(_, n)| *n);
            let _ = writeln!(out, "braid_jobs{{state=\"{state}\"}} {n}");
        }
        let counter = |out: &mut String, name: &str, help: &str, v: &AtomicU64| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let _ = writeln!(out, "{name} {}", v.load(Ordering::Relaxed));
        };
        counter(&mut out, "braid_builds_started_total", "Builds started.", &self.builds_started);
        counter(&mut out, "braid_builds_succeeded_total", "Builds that succeeded.", &self.builds_succeeded);
        counter(&mut out, "braid_builds_failed_total", "Builds that failed or timed out.", &self.builds_failed);
        counter(&mut out, "braid_cache_hits_total", "Submissions answered from an earlier build.", &self.cache_hits);
        counter(&mut out, "braid_joined_builds_total", "Submissions that joined a build under way.", &self.joined);
        let _ = writeln!(out, "# HELP braid_build_duration_seconds Duration of finished builds.");
        let _ = writeln!(out, "# TYPE braid_build_duration_seconds summary");
        let sum = self.build_millis_sum.load(Ordering::Relaxed) as f64 / 1000.0;
        let _ = writeln!(out, "braid_build_duration_seconds_sum {sum}");
        let _ = writeln!(out, "braid_build_duration_seconds_count {}", self.build_count.load(Ordering::Relaxed));
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "# HELP braid_runs_total Runs of built workflows by outcome (time, memory and output: budget kills)."
        );
        let _ = writeln!(out, "# TYPE braid_runs_total counter");
        for (outcome, n) in runs.iter() {
            let _ = writeln!(out, "braid_runs_total{{outcome=\"{outcome}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP braid_run_duration_seconds Duration of runs (instantiation included).");
        let _ = writeln!(out, "# TYPE braid_run_duration_seconds histogram");
        for (bucket, bound) in self.run_buckets.iter().zip(RUN_BUCKETS) {
            let _ =
                writeln!(out, "braid_run_duration_seconds_bucket{{le=\"{bound}\"}} {}", bucket.load(Ordering::Relaxed));
        }
        let count: u64 = runs.values().sum();
        let _ = writeln!(out, "braid_run_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(
            out,
            "braid_run_duration_seconds_sum {}",
            self.run_micros_sum.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(out, "braid_run_duration_seconds_count {count}");
        let _ = writeln!(
            out,
            "# HELP braid_run_programs_total Programs of runs by source (memory and precompiled: cache hits)."
        );
        let _ = writeln!(out, "# TYPE braid_run_programs_total counter");
        for (source, n) in self.programs.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "braid_run_programs_total{{source=\"{source}\"}} {n}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn labels_come_from_a_closed_set() {
        let m = Metrics::default();
        for i in 0..100 {
            let method = Method::from_bytes(format!("X{}", "A".repeat(i)).as_bytes()).unwrap();
            m.request(&method, "unmatched", 405);
        }
        m.request(&Method::GET, "/healthz", 200);
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
}
