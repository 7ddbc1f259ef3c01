//! `braid doctor`: checks what builds need on this machine and prints, for
//! each missing piece, the one command that installs it. Exit 0 when every
//! required tool is there, 1 otherwise.

use std::process::Command;

use braid::build::{COMPONENT_TRIPLE, NOSTD_TRIPLE};
use braid::wasm_pkg::Toolchain;

use crate::output::{emit, tool_dirs, Invalid};

#[derive(clap::Args)]
pub struct Args {}

/// One check's outcome: what, whether it is fine, and a detail or a fix.
struct Line {
    what: &'static str,
    ok: bool,
    /// Required for any build (else only for some targets or `serve`).
    required: bool,
    detail: String,
}

pub fn run(Args {}: Args) -> anyhow::Result<()> {
    let mut lines = Vec::new();
    let cargo = version(Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())).arg("--version"));
    lines.push(Line {
        what: "cargo",
        ok: cargo.is_some(),
        required: true,
        detail: cargo.unwrap_or_else(|| "install Rust: https://rustup.rs".into()),
    });
    let installed = version(Command::new("rustup").args(["target", "list", "--installed"])).unwrap_or_default();
    for (target, what, why) in [
        ("wasm32-unknown-unknown", "rust target wasm32", "npm packages (node, web, bundler)"),
        (NOSTD_TRIPLE, "rust target thumbv7em", "no_std builds"),
        (COMPONENT_TRIPLE, "rust target wasip2", "Wasm components"),
    ] {
        let ok = installed.lines().any(|l| l.trim() == target);
        lines.push(Line {
            what,
            ok,
            required: false,
            detail: if ok { format!("{target} ({why})") } else { format!("rustup target add {target}   ({why})") },
        });
    }
    let (ok, detail) = match Toolchain::detect(&tool_dirs(), true) {
        Ok(Toolchain { wasm_bindgen, wasm_opt }) => {
            let wasm_opt = wasm_opt.map_or_else(String::new, |path| path.display().to_string());
            (true, format!("{} and {wasm_opt}", wasm_bindgen.display()))
        }
        Err(e) => (false, e.to_string()),
    };
    lines.push(Line { what: "wasm-bindgen, wasm-opt", ok, required: false, detail });
    let bwrap = version(Command::new("bwrap").arg("--version"));
    lines.push(Line {
        what: "bwrap",
        ok: bwrap.is_some(),
        required: false,
        detail: bwrap.unwrap_or_else(|| {
            "apt-get install bubblewrap   (braid serve builds published operations in a sandbox)".into()
        }),
    });
    let home = braid::registry::default_home();
    let registry = crate::output::registry();
    lines.push(Line {
        what: "registry",
        ok: registry.is_ok(),
        required: true,
        detail: match registry {
            Ok(r) => format!("{} ({} operation versions)", home.join("registry").display(), r.iter().count()),
            Err(e) => format!("{e:#}"),
        },
    });
    let mut out = String::new();
    for l in &lines {
        let mark = if l.ok {
            "ok  "
        } else if l.required {
            "FAIL"
        } else {
            "miss"
        };
        out.push_str(&format!("{mark} {:<24} {}\n", l.what, l.detail));
    }
    emit(&out)?;
    if lines.iter().any(|l| !l.ok && l.required) {
        return Err(Invalid.into());
    }
    Ok(())
}

/// The first line of a command's standard output, if it ran and succeeded.
fn version(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
