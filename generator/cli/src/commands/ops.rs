//! `braid ops`: the operation registry: list it, show one operation, add
//! operation crates, check one as publishing does, remove a version, and make the registered crates an
//! operation crate depends on resolve in its own cargo builds (`deps`).

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use braid::join;
use braid::opcheck::{self, Check};
use braid::registry::{self, Added, Origin, RegisteredOperation, Registry};
use braid::sandbox::Sandbox;
use braid::schema::Platform;

use super::client::{agent, follow, request};
use crate::output::{emit, registry};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Show one operation: types, config, targets, every version with its version id and source.
    name: Option<String>,
    /// Print JSON (an array of {name, version, version_id, origin, manifest}).
    #[arg(long, conflicts_with = "names")]
    json: bool,
    /// Print only the names, one per line.
    #[arg(long)]
    names: bool,
    /// Only operations that run on this target: native, nostd or wasm.
    #[arg(long)]
    supports: Option<Platform>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Add operation crates: derive each manifest from the code, build the crate for the targets it
    /// declares, store its source; prints name, version and version id.
    Add(AddArgs),
    /// Publish an operation crate to a service (`POST /v1/operations`): derives its manifest here
    /// first, uploads a .tar.gz of its sources, and waits until the service has built it in its
    /// sandbox and registered it.
    Publish(PublishArgs),
    /// Make the registered crates an operation crate depends on by version (`op_photo_proof =
    /// "0.1"`, for its value types) resolve in its own `cargo build` and `cargo test`: writes their
    /// registry copies' paths into DIR/.cargo/config.toml (as `braid new op` wrote it). Run it again
    /// after changing those dependencies.
    Deps {
        /// Directory of the operation crate.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Build an operation crate for every target its manifest declares, as publishing checks it,
    /// registering nothing; prints name, version and version id. With --sandbox, inside the
    /// sandbox, as `braid serve` checks each upload (it runs this as a supervised child).
    Check(CheckArgs),
    /// Remove one version: `braid ops remove op_x@0.1.0`.
    Remove {
        /// NAME@VERSION
        operation: String,
    },
}

#[derive(clap::Args)]
struct AddArgs {
    /// Directories of operation crates.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Register without building the crate first.
    #[arg(long)]
    no_build: bool,
    /// Cargo target directory for the builds (default: the shared one, see `braid build`).
    #[arg(long)]
    target_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Directory of the operation crate.
    dir: PathBuf,
    /// Cargo target directory for the builds (default: the shared one, see `braid build`).
    #[arg(long)]
    target_dir: Option<PathBuf>,
    /// Where the crate is staged and built (default: under the registry, per source).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Build inside the sandbox (bubblewrap: no network, the file system read-only but for the
    /// work and target directories).
    #[arg(long)]
    sandbox: bool,
    /// With --sandbox: also hide this directory (repeatable).
    #[arg(long, value_name = "DIR", requires = "sandbox")]
    sandbox_hide: Vec<PathBuf>,
    /// With --sandbox: the longest a sandboxed command may run, in seconds (default 600).
    #[arg(long, value_name = "SECS", requires = "sandbox")]
    sandbox_timeout: Option<u64>,
    /// Refuse the crate unless its version id (of its sources) is this one.
    #[arg(long)]
    version_id: Option<String>,
}

#[derive(clap::Args)]
struct PublishArgs {
    /// Directory of the operation crate.
    dir: PathBuf,
    /// The service, e.g. http://127.0.0.1:8080 (plain HTTP; put TLS in front of it in a proxy).
    #[arg(long)]
    server: String,
    /// A publisher key of the service (default: $BRAID_PUBLISHER_KEY).
    #[arg(long, env = "BRAID_PUBLISHER_KEY", hide_env_values = true)]
    key: String,
    /// Return once the upload is accepted, without waiting for the build.
    #[arg(long)]
    no_wait: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Some(Command::Add(add)) => self::add(add),
        Some(Command::Publish(publish)) => self::publish(publish),
        Some(Command::Check(check)) => self::check(check),
        Some(Command::Deps { dir }) => deps(&dir),
        Some(Command::Remove { operation }) => remove(&operation),
        None => match &args.name {
            Some(name) => show(name, args.json),
            None => list(&args),
        },
    }
}

fn list(Args { json, names, supports, .. }: &Args) -> anyhow::Result<()> {
    let registry = registry()?;
    let selected: Vec<_> = registry.iter().filter(|op| supports.is_none_or(|p| op.manifest.supports(p))).collect();
    let mut out = String::new();
    if *names {
        let mut seen: Vec<&str> = selected.iter().map(|op| op.name()).collect();
        seen.dedup();
        for name in seen {
            out.push_str(name);
            out.push('\n');
        }
    } else if *json {
        let list: Vec<serde_json::Value> = selected.iter().map(|op| describe(op)).collect();
        out = serde_json::to_string_pretty(&list)? + "\n";
    } else {
        for op in &selected {
            let m = &op.manifest;
            let sig = match &m.output {
                Some(output) => {
                    let dots = if m.is_flow_control() { "..." } else { "" };
                    format!("{}{dots} -> {output}", m.input_list())
                }
                None => format!("types: {}", m.types.keys().cloned().collect::<Vec<_>>().join(", ")),
            };
            let targets = format!("[{}]", join(&m.targets, ","));
            out.push_str(&format!("{:<14} {:<8} {:<26} {:<20} {}\n", m.name, m.version, sig, targets, op.version_id));
        }
    }
    Ok(emit(&out)?)
}

fn describe(op: &RegisteredOperation) -> serde_json::Value {
    serde_json::json!({
        "name": op.name(),
        "version": op.manifest.version,
        "version_id": op.version_id,
        "origin": op.origin,
        "source_dir": op.source_dir(),
        "manifest": op.manifest,
    })
}

fn show(name: &str, json: bool) -> anyhow::Result<()> {
    let registry = registry()?;
    let versions = registry.versions(name);
    let Some(newest) = versions.first() else {
        bail!("no operation `{name}` in the registry; `braid ops` lists them, `braid ops add DIR` adds one");
    };
    if json {
        let list: Vec<serde_json::Value> = versions.iter().map(describe).collect();
        return Ok(emit(&(serde_json::to_string_pretty(&list)? + "\n"))?);
    }
    let m = &newest.manifest;
    let mut description = m.description.lines();
    let mut out = format!("{name}: {}\n", description.next().unwrap_or_default());
    for line in description {
        out.push_str(&format!("  {line}\n"));
    }
    match &m.output {
        Some(output) => {
            let dots = if m.is_flow_control() { " (any number of inputs of this type)" } else { "" };
            out.push_str(&format!("  inputs:  {}{dots}\n  output:  {output}\n", m.input_list()));
        }
        None => out.push_str("  a crate of value types only, not an operation (operations depend on it)\n"),
    }
    if !m.types.is_empty() {
        out.push_str(&format!("  types:   {}\n", m.types.keys().cloned().collect::<Vec<_>>().join(", ")));
    }
    if m.config.is_empty() && m.output.is_some() {
        out.push_str("  config:  none\n");
    }
    for (key, values) in &m.config {
        out.push_str(&format!("  config:  {key} = {} (default {})\n", values.join(" | "), values[0]));
    }
    out.push_str(&format!("  targets: {}\n", join(&m.targets, ", ")));
    if !m.groups.is_empty() {
        out.push_str(&format!("  groups:  {}\n", m.groups.join(", ")));
    }
    out.push_str("  versions (newest first):\n");
    for op in versions {
        let origin = match op.origin {
            Origin::Builtin => "built in",
            Origin::Added => "added",
            Origin::Published => "published",
        };
        out.push_str(&format!("    {}  {}  {origin}\n", op.manifest.version, op.version_id));
        out.push_str(&format!("      source {}", op.source_id()));
        if let Some(dir) = op.source_dir() {
            out.push_str(&format!(" in {}", dir.display()));
        }
        out.push('\n');
    }
    Ok(emit(&out)?)
}

fn add(AddArgs { dirs, no_build, target_dir }: AddArgs) -> anyhow::Result<()> {
    let mut registry = registry()?;
    let target_dir = target_dir.unwrap_or_else(braid::build::default_target_dir);
    for dir in &dirs {
        let files = registry::read_crate(dir)?;
        let prepared = registry::prepare(files, &dir.display().to_string())?;
        let m = &prepared.manifest;
        if !no_build && !already(&registry, &prepared) {
            eprintln!("building {} {} for {}", m.name, m.version, join(&m.targets, ", "));
            let work_dir = work_dir(&registry, &prepared)?;
            opcheck::check(
                &prepared,
                &Check { work_dir, target_dir: target_dir.clone(), sandbox: None, registry: &registry },
            )?;
        }
        let (name, version, id) = (m.name.clone(), m.version.clone(), prepared.version_id.clone());
        let outcome = registry.add(prepared, Origin::Added)?;
        let note = match outcome {
            Added::New | Added::Replaced => "",
            Added::Unchanged => "  (already registered)",
        };
        emit(&format!("{name} {version} {id}{note}\n"))?;
    }
    Ok(())
}

fn check(args: CheckArgs) -> anyhow::Result<()> {
    let registry = registry()?;
    let files = registry::read_crate(&args.dir)?;
    let prepared = registry::prepare(files, &args.dir.display().to_string())?;
    if let Some(expected) = args.version_id.as_deref().filter(|id| *id != prepared.version_id) {
        bail!("the sources changed since the upload (version id {}, not {expected})", prepared.version_id);
    }
    let target_dir = args.target_dir.unwrap_or_else(braid::build::default_target_dir);
    let work_dir = match args.work_dir {
        Some(dir) => dir,
        None => work_dir(&registry, &prepared)?,
    };
    let sandbox = if args.sandbox {
        let mut sandbox = Sandbox::detect()?.writable(&work_dir)?.writable(&target_dir)?;
        if let Some(secs) = args.sandbox_timeout {
            sandbox = sandbox.timeout(std::time::Duration::from_secs(secs));
        }
        for dir in &args.sandbox_hide {
            sandbox = sandbox.hide(dir);
        }
        Some(sandbox)
    } else {
        None
    };
    let m = &prepared.manifest;
    eprintln!("building {} {} for {}", m.name, m.version, join(&m.targets, ", "));
    opcheck::check(&prepared, &Check { work_dir, target_dir, sandbox: sandbox.as_ref(), registry: &registry })?;
    Ok(emit(&format!("{} {} {}\n", m.name, m.version, prepared.version_id))?)
}

/// Whether the same sources are registered already (nothing to build).
fn already(registry: &Registry, prepared: &registry::Prepared) -> bool {
    registry.by_version_id(&prepared.version_id).is_some()
}

/// Where `ops add` builds a crate: under the registry, per source.
fn work_dir(registry: &Registry, prepared: &registry::Prepared) -> anyhow::Result<PathBuf> {
    let base = registry.dir().context("the registry has no directory")?;
    Ok(base.join("check").join(prepared.manifest.source.as_deref().unwrap_or_default()))
}

fn deps(dir: &std::path::Path) -> anyhow::Result<()> {
    let registry = registry()?;
    let home = braid::registry::default_home();
    let linked = braid::scaffold::link_registered(dir, &home, &registry)?;
    let mut out = String::new();
    for patch in &linked.patches {
        out.push_str(&format!("{} {} {}\n", patch.name, patch.version, patch.dir.display()));
    }
    if linked.patches.is_empty() {
        eprintln!("{} depends on no registered crate (by version)", dir.display());
    }
    match &linked.written {
        Some(config) => eprintln!("wrote {}", config.display()),
        None => {
            let config = dir.join(".cargo/config.toml");
            eprintln!("{} was not written by braid: left as it is; its [patch.crates-io] needs:", config.display());
            out.push_str(&linked.text);
        }
    }
    emit(&out)?;
    Ok(())
}

fn remove(spec: &str) -> anyhow::Result<()> {
    let Some((name, version)) = spec.split_once('@') else {
        bail!("`{spec}`: name the version to remove as NAME@VERSION, e.g. op_x@0.1.0 (`braid ops NAME` lists them)");
    };
    let mut registry = registry()?;
    let op = registry.remove(name, version)?;
    emit(&format!("removed {} {} {}\n", op.name(), op.manifest.version, op.version_id))?;
    Ok(())
}

fn publish(PublishArgs { dir, server, key, no_wait }: PublishArgs) -> anyhow::Result<()> {
    // Derived here first: a bad crate is reported without a round trip.
    let files = registry::read_crate(&dir)?;
    let prepared = registry::prepare(files.clone(), &dir.display().to_string())?;
    let archive: Vec<(String, Vec<u8>)> = files.into_iter().map(|(p, t)| (p, t.into_bytes())).collect();
    let body = braid::archive::pack_gz(&archive);
    let server = server.trim_end_matches('/');
    let m = &prepared.manifest;
    eprintln!("publishing {} {} ({} bytes) to {server}", m.name, m.version, body.len());
    let agent = agent();
    let answer = request(
        agent
            .post(&format!("{server}/v1/operations"))
            .header("x-api-key", &key)
            .header("content-type", "application/gzip")
            .send(&body[..]),
    )?;
    let state = answer["state"].as_str().unwrap_or_default().to_string();
    let version_id = answer["version_id"].as_str().unwrap_or_default().to_string();
    if state == "registered" {
        emit(&format!("{} {} {version_id}  (already registered)\n", m.name, m.version))?;
        return Ok(());
    }
    let job = answer["job"].as_str().context("the service answered without a job")?.to_string();
    if no_wait {
        emit(&format!("{} {} {version_id}  (queued: {server}/v1/publishes/{job})\n", m.name, m.version))?;
        return Ok(());
    }
    let status = follow(&agent, &format!("{server}/v1/publishes/{job}"), &key)?;
    if status["state"] == "failed" {
        bail!(
            "the service did not register {} {}: {}",
            m.name,
            m.version,
            status["error"].as_str().unwrap_or("no reason given")
        );
    }
    emit(&format!("{} {} {version_id}\n", m.name, m.version))?;
    Ok(())
}
