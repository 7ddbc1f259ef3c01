//! `braid op-package`: built-in operations alone as npm packages, built
//! from a checkout of Braid's repository (a developer's command: the tests
//! and benchmarks compare them with fused workflows).

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use braid::package::js::{self, PackageSpec, Toolchain};
use braid::registry::Registry;
use braid::target::JsTarget;

#[derive(clap::Args)]
pub struct Args {
    /// Operation names, e.g. op_multihash.
    #[arg(required = true)]
    names: Vec<String>,
    /// Comma-separated JS targets: node, web, bundler.
    #[arg(long, default_value = "node", value_delimiter = ',')]
    targets: Vec<JsTarget>,
    /// Output directory: DIR/<op>/<target>/.
    #[arg(short, long)]
    out: PathBuf,
    /// The Braid repository (default: the one this binary was built from; it must still be there).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Without Wasm SIMD (as `braid build --no-simd`).
    #[arg(long)]
    no_simd: bool,
}

pub fn run(Args { names, targets, out, root, no_simd }: Args) -> anyhow::Result<()> {
    let root = root.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let root = root.canonicalize().with_context(|| format!("cannot open the repository at {}", root.display()))?;
    let registry = Registry::builtin();
    let tools = Toolchain::detect(&[root.join("js/node_modules/.bin")], true)?;
    for name in &names {
        let Some(op) = registry.get(name) else {
            bail!("no operation `{name}` in the registry; `braid ops` lists them");
        };
        if op.manifest.kind == braid::schema::Kind::Types {
            bail!("`{name}` is a crate of value types only: it has no package of its own (its types are in the packages of the workflows that use them)");
        }
        let spec = PackageSpec { simd: !no_simd, ..PackageSpec::operation(&root, op)? };
        let wasm = js::compile(&spec)?;
        for target in &targets {
            let dir = out.join(name).join(target.name());
            let pkg = js::package(&spec, &wasm, *target, &dir, &tools)?;
            println!("{name} {:<8} {} ({} bytes of wasm)", target.name(), pkg.dir.display(), pkg.wasm_bytes);
        }
    }
    Ok(())
}
