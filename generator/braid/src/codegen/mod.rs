//! Code generation: a checked [`Workflow`] becomes a typed [`CratePlan`]
//! ([`plan`]), which the templates of `templates/` (one registry, one
//! generated-file header) render into the files of one Rust crate
//! (`Cargo.toml`, `rustfmt.toml`, `src/lib.rs` with its TypeScript
//! declarations) and of `braid run`'s runner. Templates only see the
//! plan's values, each made safe by [`literal`], so no manifest text
//! reaches the source unescaped. Output is deterministic: same workflow,
//! same bytes.

mod component;
pub mod literal;
mod parts;
pub mod plan;
mod typescript;

use handlebars::Handlebars;
use serde::Serialize;

use self::component::ComponentPlan;
use self::literal::RustStr;
pub use self::plan::{plan, CratePlan};
pub use crate::fsutil::File;
use crate::manifest::Workflow;
use crate::sources;

/// Braid's version, written into the `@generated` header.
pub const BRAID_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every template, by name: its path under `templates/`, without `.hbs`
/// (embedded by `build.rs`, [`crate::sources`]).
const TEMPLATES: &[&str] =
    &["Cargo.toml", "rustfmt.toml", "lib.rs", "typescript.d.ts", "world.wit", "runner/main.rs", "runner/Cargo.toml"];

/// The partials templates share (`{{> header comment="//"}}`), in
/// `templates/partials/`.
const PARTIALS: &[&str] = &["header", "arg", "run_segment", "segment_steps", "typed_param", "typed_bytes"];

/// Generation failed: a bug in Braid's templates or names, not bad input.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("rendering {template}: {source}")]
    Template {
        template: &'static str,
        #[source]
        source: Box<handlebars::RenderError>,
    },
    /// The WIT world rendered does not parse, or has no `workflow` world.
    #[error(
        "the generated WIT world is not valid WIT (a bug in Braid's WIT template or names; please report it): {0}"
    )]
    Wit(String),
}

/// The templates, registered once: strict mode (a missing field is an
/// error), no HTML escaping (output is Rust, TOML and TypeScript; values
/// are made safe in Rust before they get here).
pub struct Generator {
    handlebars: Handlebars<'static>,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

/// What `lib.rs` renders: the plan and its TypeScript declarations.
#[derive(Serialize)]
struct LibRs<'a> {
    #[serde(flatten)]
    plan: &'a CratePlan,
    typescript_lit: RustStr,
    /// The plan of the WIT world (`wit/world.wit`), for a component.
    world: Option<&'a ComponentPlan>,
}

/// What `world.wit` is rendered from.
#[derive(Serialize)]
struct World<'a> {
    header: &'a plan::Header,
    #[serde(flatten)]
    component: &'a ComponentPlan,
}

impl Generator {
    pub fn new() -> Self {
        let mut handlebars = Handlebars::new();
        handlebars.set_strict_mode(true);
        handlebars.register_escape_fn(handlebars::no_escape);
        for name in PARTIALS {
            let text = sources::template(&format!("partials/{name}.hbs"));
            handlebars.register_partial(name, text).unwrap_or_else(|e| panic!("templates/partials/{name}.hbs: {e}"));
        }
        for name in TEMPLATES {
            let text = sources::template(&format!("{name}.hbs"));
            handlebars.register_template_string(name, text).unwrap_or_else(|e| panic!("templates/{name}.hbs: {e}"));
        }
        Self { handlebars }
    }

    fn render_one(&self, template: &'static str, data: &impl Serialize) -> Result<String, RenderError> {
        self.handlebars
            .render(template, data)
            .map_err(|source| RenderError::Template { template, source: Box::new(source) })
    }

    /// The crate's own files (vendored operations are added by `vendor`).
    pub fn render(&self, workflow: &Workflow) -> Result<Vec<File>, RenderError> {
        self.render_plan(&plan(workflow))
    }

    /// The crate's own files, from its plan.
    pub fn render_plan(&self, plan: &CratePlan) -> Result<Vec<File>, RenderError> {
        let typescript = self.render_one("typescript.d.ts", plan)?;
        let component = match &plan.component {
            Some(Ok(component)) => Some(component),
            _ => None,
        };
        let world = match component {
            Some(component) => {
                let world = self.render_one("world.wit", &World { header: &plan.header, component })?;
                check_world(&world)?;
                Some(world)
            }
            None => None,
        };
        let lib = LibRs { plan, typescript_lit: RustStr::new(&typescript), world: component };
        let mut files = vec![
            File { path: "Cargo.toml".into(), contents: self.render_one("Cargo.toml", plan)? },
            // Generated code is not reformatted by `cargo fmt`.
            File { path: "rustfmt.toml".into(), contents: self.render_one("rustfmt.toml", plan)? },
            File { path: "src/lib.rs".into(), contents: self.render_one("lib.rs", &lib)? },
        ];
        files.extend(world.map(|contents| File { path: WORLD_WIT.into(), contents }));
        Ok(files)
    }

    /// The files of `braid run`'s runner crate (see [`crate::runner`]).
    pub fn render_runner(&self, runner: &impl Serialize) -> Result<Vec<File>, RenderError> {
        Ok(vec![
            File { path: "Cargo.toml".into(), contents: self.render_one("runner/Cargo.toml", runner)? },
            File { path: "main.rs".into(), contents: self.render_one("runner/main.rs", runner)? },
        ])
    }
}

/// Where a generated crate keeps its WIT world (for the component target).
pub const WORLD_WIT: &str = "wit/world.wit";

/// Checks a rendered WIT world as wit-bindgen and wit-component will read
/// it: it parses and resolves, and has the world `workflow`. A template
/// mistake is an error here, where the world is made, not in a build.
pub fn check_world(text: &str) -> Result<(), RenderError> {
    let mut resolve = wit_parser::Resolve::new();
    let package = resolve.push_source(WORLD_WIT, text).map_err(|e| RenderError::Wit(resolve.render_error(&e)))?;
    resolve.select_world(&[package], Some("workflow")).map_err(|e| RenderError::Wit(resolve.render_error(&e)))?;
    Ok(())
}

/// `wf_<name>`: lowercase, `-` as `_`.
pub fn crate_name(manifest_name: &str) -> String {
    format!("wf_{}", crate::schema::name_key(manifest_name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::validate;
    use crate::Registry;

    #[test]
    fn every_file_starts_with_the_one_header() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workflows/salted_cid.json");
        let w = validate(&std::fs::read_to_string(path).unwrap(), &Registry::builtin()).unwrap();
        let files = Generator::new().render(&w).unwrap();
        for file in &files {
            let comment = if file.path.ends_with(".rs") || file.path.ends_with(".wit") { "//" } else { "#" };
            let header = format!("{comment} @generated by braid {BRAID_VERSION} from salted_cid. DO NOT EDIT.\n");
            assert!(file.contents.starts_with(&header), "{}: {}", file.path, file.contents);
        }
        assert_eq!(
            files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["Cargo.toml", "rustfmt.toml", "src/lib.rs", WORLD_WIT]
        );
    }

    /// A world that does not parse, or has no `workflow`, is a generation
    /// error saying where (every example's world is parsed as the golden
    /// tests render it).
    #[test]
    fn an_invalid_world_is_an_error_where_it_is_made() {
        let bad_type = "package braid:x;\nworld workflow {\n  export run: func() -> nope;\n}\n";
        let error = check_world(bad_type).unwrap_err().to_string();
        assert!(error.starts_with("the generated WIT world is not valid WIT"), "{error}");
        assert!(error.contains("nope") && error.contains("wit/world.wit:3"), "{error}");
        let no_workflow = "package braid:x;\nworld other {}\n";
        assert!(check_world(no_workflow).unwrap_err().to_string().contains("workflow"));
        assert!(check_world("package braid:x;\nworld workflow {}\n").is_ok());
    }
}
