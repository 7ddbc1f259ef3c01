//! A client of a `braid serve` service, for the commands that talk to one
//! (`braid ops publish`, `braid deploy`): answers as JSON, problems as
//! errors that carry their detail.

use anyhow::bail;

/// An HTTP client that hands every answer back, 4xx and 5xx included:
/// their problem documents say what went wrong.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

/// The JSON of a service's answer, or its problem's detail as the error.
pub fn request(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> anyhow::Result<serde_json::Value> {
    let mut response = response.map_err(|e| anyhow::anyhow!("cannot reach the service: {e}"))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response.body_mut().read_json()?);
    }
    let problem: serde_json::Value = response.body_mut().read_json().unwrap_or_default();
    bail!("the service answered {}: {}", status.as_u16(), problem["detail"].as_str().unwrap_or("(no detail)"))
}

/// Follows the job at `url` (a build's or a publish's) until it ends,
/// printing its progress as it changes: its last state, `succeeded` or
/// `failed`.
pub fn follow(agent: &ureq::Agent, url: &str, key: &str) -> anyhow::Result<serde_json::Value> {
    let mut last = String::new();
    loop {
        let status = request(agent.get(url).header("x-api-key", key).call())?;
        let progress = status["progress"].as_str().unwrap_or_default();
        if progress != last {
            eprintln!("  {progress}");
            last = progress.to_string();
        }
        if matches!(status["state"].as_str(), Some("succeeded" | "failed")) {
            return Ok(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}
