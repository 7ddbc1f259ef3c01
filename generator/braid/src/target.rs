//! The targets Braid builds for, by the names users write (`native`,
//! `nostd`, `node`, `web`, `bundler`, `component`, `http`, `steps`) on the
//! command line, in `report.json` and over HTTP, and the Rust target
//! triples behind them.

use braid_schema::Platform;
use serde::{Deserialize, Serialize};

/// The names of [`Target::ALL`], as one literal for messages.
macro_rules! target_names {
    () => {
        "native, nostd, node, web, bundler, component, http, steps"
    };
}

/// What `braid build` can produce; written and read as its name
/// (`native`, `nostd`, `node`, `web`, `bundler`, `component`, `http`,
/// `steps`) on the command line, in `report.json` and over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Target {
    Native,
    Nostd,
    Js(JsTarget),
    /// A Wasm component (`component/<crate>.wasm`, WASI 0.2) exporting
    /// `run` as `component/world.wit` says.
    Component,
    /// The workflow as an HTTP function (`http/<crate>.wasm`): a component
    /// exporting `wasi:http/incoming-handler` (WASI 0.2) that answers as
    /// Braid's run endpoint does.
    Http,
    /// Each operation of the workflow as a web package of its own
    /// (`steps/<operation>/`), every configuration value compiled in and
    /// chosen per call: what runs a workflow one step at a time, as the
    /// editor's previews of each step's output do, without a fused build.
    Steps,
}

impl Target {
    pub const ALL: [Target; 8] = [
        Target::Native,
        Target::Nostd,
        Target::Js(JsTarget::Node),
        Target::Js(JsTarget::Web),
        Target::Js(JsTarget::Bundler),
        Target::Component,
        Target::Http,
        Target::Steps,
    ];

    /// Every target's name, for messages.
    pub const NAMES: &'static str = target_names!();

    pub fn name(self) -> &'static str {
        match self {
            Target::Native => "native",
            Target::Nostd => "nostd",
            Target::Js(t) => t.name(),
            Target::Component => "component",
            Target::Http => "http",
            Target::Steps => "steps",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The operation-manifest target this needs.
    pub(crate) fn requires(self) -> Platform {
        match self {
            Target::Native => Platform::Native,
            Target::Nostd => Platform::Nostd,
            Target::Js(_) | Target::Component | Target::Http | Target::Steps => Platform::Wasm,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Target {
    type Err = UnknownTarget;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::parse(name).ok_or_else(|| UnknownTarget::new(name, Target::NAMES))
    }
}

impl From<Target> for &'static str {
    fn from(target: Target) -> Self {
        target.name()
    }
}

impl TryFrom<String> for Target {
    type Error = UnknownTarget;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        name.parse()
    }
}

/// Targets from the command line: each a target's name, or `wasm` for the
/// three packages compiled to it (`node`, `web`, `bundler`), the word
/// operation manifests and `braid validate` use; sorted, each once.
pub fn parse_targets(names: &[String]) -> Result<Vec<Target>, UnknownTarget> {
    let mut targets = Vec::new();
    for name in names {
        if name == "wasm" {
            targets.extend(JsTarget::ALL.map(Target::Js));
        } else {
            targets.push(Target::parse(name).ok_or_else(|| {
                UnknownTarget::new(name, concat!(target_names!(), ", or wasm (node, web and bundler)"))
            })?);
        }
    }
    targets.sort();
    targets.dedup();
    Ok(targets)
}

/// A target name Braid does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target `{found}`; expected {expected}")]
pub struct UnknownTarget {
    /// The name as given (shortened).
    pub found: String,
    expected: &'static str,
}

impl UnknownTarget {
    pub(crate) fn new(found: &str, expected: &'static str) -> Self {
        Self { found: found.chars().take(64).collect(), expected }
    }
}

/// Where a build for [`Target::Steps`] puts each operation's web package:
/// `<out>/steps/<operation>/`.
pub const STEPS_DIR: &str = "steps";

/// The bare-metal target `nostd` builds for.
pub const NOSTD_TRIPLE: &str = "thumbv7em-none-eabihf";

/// The target of every Wasm build: the npm packages' module, and the core
/// module `component` encodes as a component (plain Wasm, so the component
/// imports nothing: no WASI).
pub const WASM_TRIPLE: &str = "wasm32-unknown-unknown";

/// How `component` builds, beyond Braid's version: part of the publish
/// service's build keys, so that a build made in an earlier format is made
/// again when its workflow is submitted, not found and served as it was
/// (components were built for wasm32-wasip2, importing WASI, which the
/// executor now refuses; then without `run-packed`, which keeps the host's
/// copies of values bounded). Keep the encoder's version equal to its pin.
pub const COMPONENT_FORMAT: &str = "wasm32-unknown-unknown + wit-component 0.254.2 + run-packed";

/// The JS flavours wasm-bindgen emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum JsTarget {
    /// CommonJS for Node.
    Node,
    /// An ES module that fetches its `.wasm`, for browsers.
    Web,
    /// An ES module importing the `.wasm`, for bundlers.
    Bundler,
}

impl JsTarget {
    pub const ALL: [JsTarget; 3] = [JsTarget::Node, JsTarget::Web, JsTarget::Bundler];

    /// The name used on Braid's command line and in output paths.
    pub fn name(self) -> &'static str {
        match self {
            JsTarget::Node => "node",
            JsTarget::Web => "web",
            JsTarget::Bundler => "bundler",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl std::fmt::Display for JsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for JsTarget {
    type Err = UnknownTarget;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::parse(name).ok_or_else(|| UnknownTarget::new(name, "node, web or bundler"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasm_on_the_command_line_is_its_three_packages() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let parsed = parse_targets(&names(&["wasm", "native", "node"])).unwrap();
        assert_eq!(parsed.iter().map(|t| t.name()).collect::<Vec<_>>(), ["native", "node", "web", "bundler"]);
        let err = parse_targets(&names(&["riscv"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown target `riscv`; expected native, nostd, node, web, bundler, component, http, steps, or wasm (node, web and bundler)"
        );
    }

    #[test]
    fn the_names_in_messages_are_every_target() {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(Target::NAMES, names.join(", "));
        for t in Target::ALL {
            assert_eq!(Target::parse(t.name()), Some(t));
        }
    }
}
