//! `braid run`: a small binary crate next to the generated crate (cached
//! per workflow id under the build cache) that reads one file per external
//! input, runs the workflow natively and prints its output.

use std::path::{Path, PathBuf};
use std::process::Command;

use braid_support::typename::TypeName;
use serde::Serialize;

use crate::build::BuildError;
use crate::codegen::literal::{Ident, Plain, RustStr, TomlStr};
use crate::codegen::plan::{ExternalInput, Header};
use crate::codegen::{plan, Generator};
use crate::fsutil;
use crate::manifest::Workflow;
use crate::project::{self, GenerateError};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("workflow {workflow} takes {expected} external input(s) ({types}); got {found} --input file(s)")]
    Arity { workflow: String, expected: usize, types: String, found: usize },
    #[error("braid run cannot read a {0} input from a file; use the Rust or JS API")]
    UnsupportedInput(String),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// An input file could not be read, or is not a value of its type.
    #[error("{0}")]
    Input(String),
    /// The workflow ran and returned an error (`braid run` exits 3).
    #[error("workflow {workflow} failed: {message}")]
    Workflow { workflow: String, message: String },
    #[error("{0}")]
    Failed(String),
}

/// What the runner's templates (`templates/runner/`) render: the workflow's
/// plan, and how each external input is read from its file.
#[derive(Serialize)]
struct RunnerPlan<'a> {
    header: &'a Header,
    /// The runner's package and binary name.
    package: TomlStr,
    crate_name: &'a Ident,
    support_dir: &'a Plain,
    /// The input types, for its usage message.
    types_lit: RustStr,
    inputs: Vec<RunnerInput<'a>>,
    /// The names of the value types of one's own in the output (the
    /// generated crate re-exports them), printed as JSON.
    value_types: Vec<Ident>,
    /// The workflow streams its input (`stream()`): the file is read in chunks.
    stream: bool,
}

#[derive(Serialize)]
struct RunnerInput<'a> {
    #[serde(flatten)]
    input: &'a ExternalInput,
    reader: Reader,
}

/// The function of `templates/runner/main.rs.hbs` that reads a file as a
/// value of the input's type.
#[derive(Debug, Clone, Copy, Serialize)]
enum Reader {
    #[serde(rename = "bytes")]
    Bytes,
    #[serde(rename = "text")]
    Text,
    #[serde(rename = "multihash")]
    Multihash,
    #[serde(rename = "cid")]
    Cid,
    #[serde(rename = "u64_")]
    U64,
    #[serde(rename = "bool_")]
    Bool,
}

impl Reader {
    fn of(ty: &TypeName) -> Result<Self, RunError> {
        Ok(match ty {
            TypeName::Bytes => Self::Bytes,
            TypeName::String => Self::Text,
            TypeName::Multihash => Self::Multihash,
            TypeName::Cid => Self::Cid,
            TypeName::U64 => Self::U64,
            TypeName::Bool => Self::Bool,
            other => return Err(RunError::UnsupportedInput(other.to_string())),
        })
    }
}

/// What the runner printed.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The output.
    pub stdout: String,
    /// Timing, with `time`.
    pub stderr: String,
}

/// The input files in the order `run` takes them: `NAME=FILE` goes to the
/// input the manifest names NAME (`inputs`), the others fill the remaining
/// places in order. An argument whose text before `=` names no input is a
/// file name.
pub fn place_inputs(workflow: &Workflow, given: &[PathBuf]) -> Result<Vec<PathBuf>, RunError> {
    let names = &workflow.manifest.inputs;
    let mut named: Vec<Option<PathBuf>> = vec![None; names.len()];
    let mut positional = Vec::new();
    for arg in given {
        let split = arg.to_str().and_then(|a| a.split_once('=')).filter(|(name, _)| names.iter().any(|n| n == name));
        match split {
            Some((name, file)) => {
                let slot = names.iter().position(|n| n == name).expect("found above");
                if named[slot].replace(PathBuf::from(file)).is_some() {
                    return Err(RunError::Input(format!("input `{name}` is given twice (--input {name}=...)")));
                }
            }
            None => positional.push(arg.clone()),
        }
    }
    if named.iter().all(Option::is_none) {
        return Ok(positional);
    }
    let mut rest = positional.into_iter();
    let mut placed: Vec<PathBuf> = named.into_iter().filter_map(|file| file.or_else(|| rest.next())).collect();
    placed.extend(rest);
    Ok(placed)
}

/// Builds (cached) and runs `workflow` with one file per external input;
/// returns what it printed.
pub fn run(
    workflow: &Workflow,
    generator: &Generator,
    target_dir: &Path,
    inputs: &[PathBuf],
    time: bool,
) -> Result<Ran, RunError> {
    let types = workflow.external_inputs();
    let type_list = workflow.signature().rsplit_once(" -> ").map_or_else(String::new, |(inputs, _)| inputs.to_string());
    let inputs = &place_inputs(workflow, inputs)?;
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(RunError::Input("only one --input can be `-` (standard input)".into()));
    }
    if inputs.len() != types.len() {
        return Err(RunError::Arity {
            workflow: workflow.manifest.name.clone(),
            expected: types.len(),
            types: type_list,
            found: inputs.len(),
        });
    }
    let readers = types.into_iter().map(Reader::of).collect::<Result<Vec<_>, _>>()?;

    let home = crate::build::run_dir(target_dir).join(&workflow.id);
    let crate_dir = home.join("crate");
    let runner_dir = home.join("runner");
    fsutil::create_dir_all(&crate_dir).map_err(GenerateError::from)?;
    project::write(workflow, generator, &crate_dir)?;

    let package = format!("braid-run-{}", &workflow.id[workflow.id.len() - 12..]);
    let plan = plan(workflow);
    let runner = RunnerPlan {
        header: &plan.header,
        package: TomlStr::new(&package),
        crate_name: &plan.crate_name,
        support_dir: &plan.support_dir,
        types_lit: RustStr::new(&type_list),
        inputs: plan.external_inputs.iter().zip(readers).map(|(input, reader)| RunnerInput { input, reader }).collect(),
        value_types: crate::registry::named_types(&workflow.crates, &[workflow.output()])
            .into_keys()
            .filter_map(|t| match t {
                TypeName::Named { name, .. } => Some(Ident::new(&name)),
                _ => None,
            })
            .collect(),
        stream: plan.stream.is_some(),
    };
    let files = generator.render_runner(&runner).map_err(GenerateError::from)?;
    project::write_files(&runner_dir, &files)?;
    let lock = runner_dir.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(crate_dir.join("Cargo.lock"), &lock).map_err(fsutil::at(&lock)).map_err(GenerateError::from)?;
    }
    let mut cmd = crate::process::cargo();
    cmd.args(["build", "--quiet", "--release", "--manifest-path"])
        .arg(runner_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    crate::process::output(&mut cmd).map_err(BuildError::from)?;
    let exe = target_dir.join("release").join(&package);
    let mut cmd = Command::new(&exe);
    cmd.args(inputs);
    if time {
        cmd.env("BRAID_RUN_TIME", "1");
    }
    // `-` is standard input: the runner reads it from ours.
    cmd.stdin(std::process::Stdio::inherit());
    let out = cmd.output().map_err(|e| RunError::Failed(format!("cannot start {}: {e}", exe.display())))?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(match out.status.code() {
            Some(2) => RunError::Input(message),
            Some(3) => RunError::Workflow { workflow: workflow.manifest.name.clone(), message },
            _ => RunError::Failed(format!("the runner failed ({}): {message}", out.status)),
        });
    }
    Ok(Ran {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}
