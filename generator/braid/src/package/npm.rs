//! One npm package for every JS platform: the Node and web packages of a
//! build (`DIR/pkg/<target>/`, and the bundler one when built) side by
//! side under `node/`, `web/` (`bundler/`), plus `browser/`, the web glue
//! with its Wasm inlined; `exports` conditions pick `node` in Node and
//! `browser` everywhere else (every bundler, zero config), `./web` for a
//! page without a bundler. Types for each, a license, and a README that
//! gives the workflow's signature and an example. This is what the
//! publish service's npm registry (`/npm/`) serves.

use std::path::Path;

use serde::Serialize;
use serde_json::{json, Value};

use crate::fsutil::{self, FsError};
use crate::manifest::Workflow;
use crate::target::JsTarget;

#[derive(Debug, thiserror::Error)]
pub enum NpmPackageError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("the build has no {0} package (pkg/{0}/): one npm package needs node and web")]
    MissingTarget(&'static str),
    #[error("npm scope {0:?} is not `@` and a lowercase name (letters, digits, `-`, `_`, `.`)")]
    BadScope(String),
}

/// The unified package: its files (path below `package/`, bytes) and its
/// `package.json`.
#[derive(Debug, Clone)]
pub struct NpmPackage {
    pub name: String,
    pub version: String,
    pub package_json: Value,
    pub files: Vec<(String, Vec<u8>)>,
}

/// Checks an npm scope (`@org`).
pub fn check_scope(scope: &str) -> Result<(), NpmPackageError> {
    let name = scope.strip_prefix('@').unwrap_or_default();
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(NpmPackageError::BadScope(scope.to_string()))
    }
}

/// The package name of a workflow's crate, scoped if `scope` is given.
pub fn package_name(crate_name: &str, scope: Option<&str>) -> String {
    match scope {
        Some(scope) => format!("{scope}/{crate_name}"),
        None => crate_name.to_string(),
    }
}

/// Assembles the package from `pkg_dir`, which has `node/` and `web/`
/// (and `bundler/`, taken too if there), as `braid build` writes them.
pub fn unified(
    pkg_dir: &Path,
    workflow: &Workflow,
    crate_name: &str,
    scope: Option<&str>,
) -> Result<NpmPackage, NpmPackageError> {
    if let Some(scope) = scope {
        check_scope(scope)?;
    }
    let name = package_name(crate_name, scope);
    let version = workflow.manifest.version.clone();
    let has_bundler = pkg_dir.join(JsTarget::Bundler.name()).is_dir();
    let mut targets = vec![JsTarget::Node, JsTarget::Web];
    if has_bundler {
        targets.push(JsTarget::Bundler);
    }
    let mut files = Vec::new();
    for target in targets {
        let dir = pkg_dir.join(target.name());
        if !dir.is_dir() {
            return Err(NpmPackageError::MissingTarget(target.name()));
        }
        for rel in fsutil::walk(&dir)? {
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel != "package.json" {
                files.push((format!("{}/{rel}", target.name()), fsutil::read(&dir.join(&rel))?));
            }
        }
        // Each directory says how its `.js` files are to be read: the Node
        // glue is CommonJS, the others ES modules.
        let scope_json = match target {
            JsTarget::Node => json!({ "type": "commonjs" }),
            JsTarget::Web => json!({ "type": "module" }),
            JsTarget::Bundler => {
                json!({ "type": "module", "sideEffects": [format!("./{crate_name}.js"), "./snippets/*"] })
            }
        };
        files.push((format!("{}/package.json", target.name()), pretty(&scope_json)));
    }
    let wasm = fsutil::read(&pkg_dir.join("web").join(format!("{crate_name}_bg.wasm")))?;
    files.extend(browser_entry(crate_name, &wasm));
    let entry =
        |dir: &str| Entry { types: format!("./{dir}/{crate_name}.d.ts"), default: format!("./{dir}/{crate_name}.js") };
    let mut listed = vec!["README.md", "node", "web", BROWSER];
    if has_bundler {
        listed.push("bundler");
    }
    let manifest = PackageJson {
        name: name.clone(),
        version: version.clone(),
        description: workflow.manifest.description.clone(),
        license: license(workflow),
        keywords: ["braid", "workflow", "wasm"],
        main: format!("./node/{crate_name}.js"),
        module: format!("./{BROWSER}/{crate_name}.js"),
        types: format!("./node/{crate_name}.d.ts"),
        exports: Exports {
            root: Conditions { node: entry("node"), default: entry(BROWSER) },
            node: entry("node"),
            web: entry("web"),
            browser: entry(BROWSER),
            bundler: has_bundler.then(|| entry("bundler")),
            package_json: "./package.json",
        },
        files: listed,
    };
    files.push(("README.md".into(), readme(workflow, &name, crate_name).into_bytes()));
    let text = serde_json::to_string_pretty(&manifest).expect("json serializes") + "\n";
    files.push(("package.json".into(), text.into_bytes()));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut package_json = serde_json::to_value(&manifest).expect("json serializes");
    package_json.as_object_mut().expect("an object").remove("files");
    Ok(NpmPackage { name, version, package_json, files })
}

/// The package's `package.json`. A struct, not a map: conditions in
/// `exports` are tried in the order written (`node` before `default`,
/// `types` first), and serde writes a struct's fields in order.
#[derive(Serialize)]
struct PackageJson {
    name: String,
    version: String,
    description: String,
    license: String,
    keywords: [&'static str; 3],
    main: String,
    module: String,
    types: String,
    exports: Exports,
    files: Vec<&'static str>,
}

#[derive(Serialize)]
struct Exports {
    #[serde(rename = ".")]
    root: Conditions,
    #[serde(rename = "./node")]
    node: Entry,
    #[serde(rename = "./web")]
    web: Entry,
    #[serde(rename = "./browser")]
    browser: Entry,
    #[serde(rename = "./bundler", skip_serializing_if = "Option::is_none")]
    bundler: Option<Entry>,
    #[serde(rename = "./package.json")]
    package_json: &'static str,
}

#[derive(Serialize)]
struct Conditions {
    node: Entry,
    default: Entry,
}

#[derive(Serialize)]
struct Entry {
    types: String,
    default: String,
}

/// The directory of the entry that bundlers and browsers get.
const BROWSER: &str = "browser";

/// `browser/`: the web glue with its Wasm inlined (base64) and
/// instantiated synchronously when the module is first imported. Nothing
/// for a bundler to configure (no `.wasm` import, no asset URL, no
/// top-level `await`), so the same import works in webpack, Vite (dev
/// server and build), Rollup and esbuild. Browsers compile at most 8 MB of
/// Wasm synchronously on the main thread; past that, use `/web` and
/// `await init()`.
fn browser_entry(crate_name: &str, wasm: &[u8]) -> Vec<(String, Vec<u8>)> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(wasm);
    let js = format!(
        "// The web build of {crate_name} with its Wasm module inlined, instantiated on first import.\n\
         import {{ initSync }} from '../web/{crate_name}.js';\n\n\
         const WASM = '{encoded}';\n\n\
         const text = atob(WASM);\n\
         const bytes = new Uint8Array(text.length);\n\
         for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);\n\
         initSync({{ module: bytes }});\n\n\
         export * from '../web/{crate_name}.js';\n"
    );
    let dts = format!("export * from '../web/{crate_name}.js';\n");
    vec![
        (format!("{BROWSER}/{crate_name}.js"), js.into_bytes()),
        (format!("{BROWSER}/{crate_name}.d.ts"), dts.into_bytes()),
        (format!("{BROWSER}/package.json"), pretty(&json!({ "type": "module" }))),
    ]
}

fn pretty(value: &Value) -> Vec<u8> {
    (serde_json::to_string_pretty(value).expect("json serializes") + "\n").into_bytes()
}

/// The licenses of what the package contains (braid-support and every
/// operation's crate), as one SPDX expression.
fn license(workflow: &Workflow) -> String {
    let mut licenses: Vec<&str> =
        workflow.crates.iter().map(|c| c.manifest.license.as_str()).filter(|l| !l.is_empty()).collect();
    // braid-support's, which is braid's own.
    licenses.push(env!("CARGO_PKG_LICENSE"));
    licenses.sort_unstable();
    licenses.dedup();
    match licenses.as_slice() {
        [one] => one.to_string(),
        many => many.iter().map(|l| format!("({l})")).collect::<Vec<_>>().join(" AND "),
    }
}

/// Markdown text from a user's string: one line, no HTML.
fn plain(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A JS value of a manifest type, for the README's example.
fn example_value(ty: &str) -> String {
    match ty {
        "Bytes" | "Multihash" => "new TextEncoder().encode('hello')".into(),
        "String" | "Cid" => "'hello'".into(),
        "U64" => "1n".into(),
        "Bool" => "true".into(),
        other => format!("/* a {other} */ undefined"),
    }
}

fn readme(workflow: &Workflow, name: &str, crate_name: &str) -> String {
    let inputs: Vec<String> = workflow.external_inputs().iter().map(|t| example_value(&t.to_string())).collect();
    let call = format!("await run([{}])", inputs.join(", "));
    format!(
        "# {name}\n\n\
         {description}\n\n\
         A Braid workflow, `{manifest_name}` {version}, compiled to WebAssembly: \
         every operation runs inside one module.\n\n\
         Signature: `{signature}`\n\n\
         ## Use\n\n\
         Node (ES module or CommonJS) and bundlers (webpack, Vite, Rollup, esbuild) take the same import; \
         the `exports` conditions pick the build for each:\n\n\
         ```js\n\
         import {{ run }} from '{name}';\n\n\
         const output = {call};\n\
         console.log(output);\n\
         ```\n\n\
         In a page without a bundler, import `{name}/web` and call its default export (it loads \
         `{crate_name}_bg.wasm`) once before `run`.\n\n\
         `run` takes the workflow's inputs in one array; `new Workflow()` and `await wf.next([...])` run it \
         segment by segment. The TypeScript types (`{crate_name}.d.ts`) give each input's and the output's \
         exact type. A wrong input rejects with an `Error` that says what was expected.\n",
        description = plain(&workflow.manifest.description),
        manifest_name = workflow.manifest.name,
        version = workflow.manifest.version,
        signature = workflow.signature(),
    )
}
