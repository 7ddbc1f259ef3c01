//! The protocol between `braid build` and whoever runs it: [`Event`], one
//! JSON object per line with `braid build --events json` (what the publish
//! service reads), and how each reads in a log.

use serde::{Deserialize, Serialize};

use super::Report;

/// What a build reports while it runs, for a progress bar, log lines or a
/// program driving `braid build --events json`: one JSON object per line,
/// tagged by `event` (`{"event":"start","index":1,"total":4,"step":"generate"}`).
/// [`build`] reports `start` and `done`; the command reports how it ended,
/// `report` or `failed`, last. A reader should take a line that does not
/// parse as an [`Event`] for log text ([`Event::parse_line`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Step `index` (from 1) of `total` starts: `generate`, `native`,
    /// `nostd`, `wasm`, then one per JS target (`node`, `web`, `bundler`).
    Start { index: usize, total: usize, step: String },
    /// A step finished after `ms` milliseconds.
    Done { step: String, ms: u64 },
    /// The build succeeded: what `report.json` holds.
    Report { report: Box<Report> },
    /// The build failed: the error, as the command prints it.
    Failed { error: String },
}

impl Event {
    /// The event as one line of JSON, without the newline.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("an event serializes")
    }

    /// The event a line holds, or `None` when the line is something else
    /// (log text).
    pub fn parse_line(line: &str) -> Option<Event> {
        let line = line.trim_end();
        if !line.starts_with('{') {
            return None;
        }
        serde_json::from_str(line).ok()
    }
}

/// The event as a human reads it in a log: `[2/4] native`, `native done in
/// 812 ms`.
impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Start { index, total, step } => write!(f, "[{index}/{total}] {step}"),
            Event::Done { step, ms } => write!(f, "      {step} done in {ms} ms"),
            Event::Report { report } => write!(
                f,
                "built {} for {} in {} ms",
                report.crate_name,
                crate::join(&report.targets, ", "),
                report.timings_ms.values().sum::<u64>()
            ),
            Event::Failed { error } => write!(f, "error: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::target::Target;

    #[test]
    fn events_are_tagged_json_lines_and_read_back() {
        let start = Event::Start { index: 1, total: 4, step: "generate".into() };
        assert_eq!(start.to_json_line(), r#"{"event":"start","index":1,"total":4,"step":"generate"}"#);
        let done = Event::Done { step: "native".into(), ms: 812 };
        assert_eq!(done.to_json_line(), r#"{"event":"done","step":"native","ms":812}"#);
        let report = Report {
            workflow: "k".into(),
            id: "bafkr4i".into(),
            crate_name: "wf_k".into(),
            targets: vec![Target::Native],
            operations: [("op_cid".to_string(), "bafkr4io".to_string())].into(),
            timings_ms: [("generate".to_string(), 3), ("native".to_string(), 5)].into(),
            sizes_bytes: BTreeMap::new(),
            artifacts: [("crate/src/lib.rs".to_string(), "bafkr4ix".to_string())].into(),
            dist: None,
            http_input_limit_bytes: Some(1 << 20),
        };
        let failed = Event::Failed { error: "it broke\nhere".into() };
        for event in [start, done, Event::Report { report: Box::new(report) }, failed] {
            let line = event.to_json_line();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(Event::parse_line(&format!("{line}\n")), Some(event));
        }
        assert_eq!(Event::Start { index: 2, total: 4, step: "native".into() }.to_string(), "[2/4] native");
        for log in ["[1/4] generate", "   Compiling x v0.1.0", "{\"event\":\"nope\"}", "{\"event\":\"done\"}", "{"] {
            assert_eq!(Event::parse_line(log), None, "{log}");
        }
    }
}
