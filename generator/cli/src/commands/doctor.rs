//! `braid doctor`: checks what builds and `braid serve` need on this
//! machine, prints for each missing piece the command that installs it, and
//! with `--fix` runs those it can. Exit 0 when everything is there, 1
//! otherwise. `braid serve` and `braid worker` run the same checks at start.

use std::process::Command;

use braid::package::js::{Toolchain, WASM_BINDGEN_VERSION, WASM_OPT_NPM_VERSION};
use braid::target::{NOSTD_TRIPLE, WASM_TRIPLE};

use crate::output::{emit, tool_dirs, Invalid};

#[derive(clap::Args)]
pub struct Args {
    /// Install what is missing and can be installed without root: rustup targets, wasm-bindgen-cli
    /// (cargo install), binaryen's wasm-opt (npm, into the tools directory: $BRAID_TOOLS, else
    /// $BRAID_HOME/tools); then check again.
    #[arg(long)]
    fix: bool,
}

/// One check's outcome: what, whether it is fine, a detail or the command
/// that fixes it, and how `--fix` fixes it (when it can).
struct Check {
    what: &'static str,
    ok: bool,
    detail: String,
    fix: Option<Fix>,
}

enum Fix {
    Target(&'static str),
    WasmBindgen,
    WasmOpt,
}

impl Fix {
    fn command(&self) -> Command {
        match self {
            Fix::Target(triple) => {
                let mut cmd = Command::new("rustup");
                cmd.args(["target", "add", triple]);
                cmd
            }
            Fix::WasmBindgen => {
                let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
                cmd.args(["install", "wasm-bindgen-cli", "--version", WASM_BINDGEN_VERSION, "--locked"]);
                cmd
            }
            Fix::WasmOpt => {
                let mut cmd = Command::new("npm");
                cmd.args(["install", "--no-audit", "--no-fund", "--prefix"])
                    .arg(braid::registry::tools_dir())
                    .arg(format!("binaryen@{WASM_OPT_NPM_VERSION}"));
                cmd
            }
        }
    }
}

/// What builds need on this machine (what `braid serve` checks at start),
/// in the order `braid doctor` prints it.
fn toolchain() -> Vec<Check> {
    let mut checks = Vec::new();
    let cargo = version(Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())).arg("--version"));
    checks.push(Check {
        what: "cargo",
        ok: cargo.is_some(),
        detail: cargo.unwrap_or_else(|| "install Rust: https://rustup.rs".into()),
        fix: None,
    });
    let installed = version(Command::new("rustup").args(["target", "list", "--installed"])).unwrap_or_default();
    for (target, what, why) in [
        (WASM_TRIPLE, "rust target wasm32", "npm packages (node, web, bundler) and Wasm components"),
        (NOSTD_TRIPLE, "rust target thumbv7em", "no_std builds"),
    ] {
        let ok = installed.lines().any(|l| l.trim() == target);
        checks.push(Check {
            what,
            ok,
            detail: if ok { format!("{target} ({why})") } else { format!("rustup target add {target}   ({why})") },
            fix: Some(Fix::Target(target)),
        });
    }
    let tool = |what, found: Result<std::path::PathBuf, braid::package::js::PackageError>, fix| match found {
        Ok(path) => Check { what, ok: true, detail: path.display().to_string(), fix: None },
        Err(e) => Check { what, ok: false, detail: e.to_string(), fix: Some(fix) },
    };
    checks.push(tool("wasm-bindgen", Toolchain::find_wasm_bindgen(), Fix::WasmBindgen));
    checks.push(tool("wasm-opt", Toolchain::find_wasm_opt(&tool_dirs()), Fix::WasmOpt));
    checks.push(match braid::sandbox::Sandbox::detect() {
        Ok(_) => Check {
            what: "sandbox (bwrap)",
            ok: true,
            detail: "builds third-party code in bubblewrap".into(),
            fix: None,
        },
        Err(e) => Check {
            what: "sandbox (bwrap)",
            ok: false,
            detail: format!(
                "{e}   (braid serve builds published operations in it; Debian, Ubuntu: apt-get install bubblewrap)"
            ),
            fix: None,
        },
    });
    checks
}

/// Everything `braid doctor` checks: the toolchain, then the registry.
fn checks() -> Vec<Check> {
    let mut checks = toolchain();
    let home = braid::registry::default_home();
    let registry = crate::output::registry();
    checks.push(Check {
        what: "registry",
        ok: registry.is_ok(),
        detail: match registry {
            Ok(r) => format!("{} ({} operation versions)", home.join("registry").display(), r.iter().count()),
            Err(e) => format!("{e:#}"),
        },
        fix: None,
    });
    checks
}

/// The checks as `braid doctor` prints them: `ok` or `miss`, what, detail.
fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let mark = if c.ok { "ok  " } else { "miss" };
        out.push_str(&format!("{mark} {:<22} {}\n", c.what, c.detail));
    }
    out
}

pub fn run(Args { fix }: Args) -> anyhow::Result<()> {
    let mut found = checks();
    if fix {
        let mut fixed = false;
        for check in found.iter().filter(|c| !c.ok) {
            let Some(how) = &check.fix else { continue };
            let mut cmd = how.command();
            eprintln!("braid doctor: {}", shown(&cmd));
            match cmd.status() {
                Ok(status) if status.success() => fixed = true,
                Ok(status) => eprintln!("braid doctor: {} failed ({status})", check.what),
                Err(e) => eprintln!("braid doctor: cannot run `{}`: {e}", cmd.get_program().to_string_lossy()),
            }
        }
        if fixed {
            found = checks();
        }
    }
    emit(&render(&found))?;
    if found.iter().any(|c| !c.ok) {
        if !fix && found.iter().any(|c| !c.ok && c.fix.is_some()) {
            eprintln!("braid doctor --fix installs what it can of this");
        }
        return Err(Invalid.into());
    }
    Ok(())
}

/// A command as one line to show before it runs.
fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program()).chain(cmd.get_args()).map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

/// What a service on this machine cannot do, one line each (empty when
/// nothing is missing): `braid serve` prints it before it takes a job.
pub fn missing_for_serve() -> Vec<String> {
    toolchain().into_iter().filter(|c| !c.ok).map(|c| format!("{}: {}", c.what, c.detail)).collect()
}

/// The first line of a command's standard output, if it ran and succeeded.
fn version(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
