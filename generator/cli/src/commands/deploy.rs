//! `braid deploy NAME WORKFLOW.json --server URL --key KEY`: submits the
//! workflow to a service for its component, waits for the build, and points
//! the deployment `NAME` at it; `braid deploy NAME --rollback` points it back
//! at the build it pointed at before. Either may set the deployment's own
//! budgets (`--time-limit`, `--concurrent`, ...).

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use super::client::{agent, follow, request};
use crate::output::emit;

#[derive(clap::Args)]
pub struct Args {
    /// The deployment's name (1 to 63 ASCII letters, digits and `-`; compared in lower case).
    name: String,
    /// The workflow manifest to build and deploy (not with --rollback).
    #[arg(required_unless_present = "rollback", conflicts_with = "rollback")]
    workflow: Option<PathBuf>,
    /// Point the name back at the build it pointed at before its last change.
    #[arg(long)]
    rollback: bool,
    /// The service, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    server: String,
    /// An API key of the service (default: $BRAID_API_KEY); the deployment belongs to the key that made it.
    #[arg(long, env = "BRAID_API_KEY", hide_env_values = true)]
    key: String,
    #[command(flatten)]
    limits: DeploymentLimits,
}

/// The deployment's own budgets, each at most the service's. Giving any
/// replaces those it had; giving none keeps them.
#[derive(clap::Args)]
#[command(next_help_heading = "Budgets of the deployment (each at most the service's; any given replace its own)")]
struct DeploymentLimits {
    /// Longest one of its runs may take, in milliseconds.
    #[arg(long, value_name = "MS")]
    time_limit: Option<u64>,
    /// Most linear memory one of its runs may use, in MiB.
    #[arg(long, value_name = "MIB")]
    memory_limit: Option<u64>,
    /// Largest input of one of its runs, in MiB.
    #[arg(long, value_name = "MIB")]
    input_limit: Option<u64>,
    /// Largest output of one of its runs, in MiB.
    #[arg(long, value_name = "MIB")]
    output_limit: Option<u64>,
    /// Most of its runs at once on each server process (past them, 429).
    #[arg(long, value_name = "N")]
    concurrent: Option<u64>,
}

impl DeploymentLimits {
    /// The `limits` of the service's `PUT`, if any was given.
    fn json(&self) -> Option<Value> {
        let given = [
            ("time_ms", self.time_limit),
            ("memory_mib", self.memory_limit),
            ("input_mib", self.input_limit),
            ("output_mib", self.output_limit),
            ("concurrent", self.concurrent),
        ];
        let limits: serde_json::Map<String, Value> =
            given.into_iter().filter_map(|(key, value)| Some((key.to_string(), value?.into()))).collect();
        (!limits.is_empty()).then_some(Value::Object(limits))
    }
}

pub fn run(Args { name, workflow, rollback, server, key, limits }: Args) -> anyhow::Result<()> {
    let server = server.trim_end_matches('/');
    let agent = agent();
    let build = if rollback {
        let deployment = request(agent.get(&format!("{server}/v1/deployments/{name}")).call())?;
        let history = deployment["history"].as_array().cloned().unwrap_or_default();
        let current = &deployment["build_id"];
        // The newest version that pointed elsewhere than now.
        match history.iter().map(|v| &v["build_id"]).find(|b| *b != current) {
            Some(Value::String(build)) => build.clone(),
            _ => bail!("`{name}` has pointed at no other build: there is nothing to roll back to"),
        }
    } else {
        let path = workflow.context("a workflow manifest to deploy")?;
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let manifest: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
        built(&agent, server, &key, &manifest)?
    };
    let mut body = json!({ "build_id": build });
    if let Some(limits) = limits.json() {
        body["limits"] = limits;
    }
    let body = body.to_string();
    let deployment = request(
        agent
            .put(&format!("{server}/v1/deployments/{name}"))
            .header("x-api-key", &key)
            .header("content-type", "application/json")
            .send(body.as_bytes()),
    )?;
    emit(&format!(
        "{} -> build {} (version {}): POST {server}{}\n",
        deployment["name"].as_str().unwrap_or(&name),
        deployment["build_id"].as_str().unwrap_or_default(),
        deployment["version"],
        deployment["run"].as_str().unwrap_or_default(),
    ))?;
    Ok(())
}

/// Submits `manifest` for its component and waits for the build: its id.
fn built(agent: &ureq::Agent, server: &str, key: &str, manifest: &Value) -> anyhow::Result<String> {
    let body = json!({ "manifest": manifest, "targets": ["component"] }).to_string();
    let submitted = request(
        agent
            .post(&format!("{server}/v1/workflows"))
            .header("x-api-key", key)
            .header("content-type", "application/json")
            .send(body.as_bytes()),
    )?;
    let build = submitted["build_id"].as_str().context("the service answered without a build id")?.to_string();
    let Some(job) = submitted["job_id"].as_str() else { return Ok(build) };
    eprintln!("building {build} on {server}");
    let status = follow(agent, &format!("{server}/v1/jobs/{job}"), key)?;
    if status["state"] == "failed" {
        bail!("the build failed: {}", status["error"].as_str().unwrap_or("no reason given"));
    }
    Ok(build)
}
