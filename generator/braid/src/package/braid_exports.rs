//! What the glue exports: the `__braid_` functions, which the template
//! exports for the glue alone, taken out of the module's exports, and
//! wasm-bindgen's classes and functions that Braid's own API takes the
//! place of (`api.rs`); how the glue exports what Braid puts in its place
//! (`export_as`).

use super::glue::identifier_at;

/// The glue with its `__braid_` functions (the typed entries) no longer
/// exported (see [`hide_exports`]). The other `__braid_` exports of the
/// module (`__braid_room`, `__braid_finished`, `__braid_kept`) are plain
/// Wasm exports, of which wasm-bindgen makes no function.
pub(super) fn hide_braid_exports(glue: &str) -> String {
    hide_exports(glue, |name| name.starts_with("__braid_"))
}

/// The glue with the functions and classes whose name is `hidden` no longer
/// exported: by Node's `exports.NAME = NAME;`, an ES module's `export
/// function` or `export class`, or a bundler package's list of what it
/// re-exports.
pub(super) fn hide_exports(glue: &str, hidden: impl Fn(&str) -> bool) -> String {
    let name_of = identifier_at;
    let mut out = String::with_capacity(glue.len());
    let mut in_list = false;
    for line in glue.split_inclusive('\n') {
        if line.strip_prefix("exports.").is_some_and(|rest| {
            let name = name_of(rest);
            hidden(name) && rest.starts_with(&format!("{name} = {name};"))
        }) {
            continue;
        }
        let declared =
            ["export function ", "export class "].iter().find_map(|k| line.strip_prefix(k).map(|rest| (k, rest)));
        if let Some((keyword, rest)) = declared.filter(|(_, rest)| hidden(name_of(rest))) {
            out.push_str(keyword.trim_start_matches("export "));
            out.push_str(rest);
        } else if in_list && !line.starts_with('}') {
            out.push_str(&without_names(line, &hidden));
        } else if let Some(names) = line.strip_prefix("export {").and_then(|rest| rest.split_once('}')) {
            // All on one line: `export { A, B } from "./x_bg.js";`.
            out.push_str(&format!("export {{ {} }}{}", without_names(names.0, &hidden).trim(), names.1));
        } else {
            out.push_str(line);
        }
        in_list = (in_list || line == "export {\n") && !line.starts_with('}');
    }
    out
}

/// The glue's statement exporting each `(name, local)` pair's `local` (a
/// name in the glue's scope) as `name`: an ES module's `export { local as
/// name };`, or CommonJS's `exports.name = local;` for each.
pub(super) fn export_as<L: AsRef<str>>(module: bool, names: &[(&str, L)]) -> String {
    if module {
        let list: Vec<String> = names.iter().map(|(name, local)| format!("{} as {name}", local.as_ref())).collect();
        format!("export {{ {} }};\n", list.join(", "))
    } else {
        names.iter().map(|(name, local)| format!("exports.{name} = {};\n", local.as_ref())).collect()
    }
}

/// A comma-separated list of names (a line of it) without the `hidden`
/// ones, its indent and trailing comma kept.
fn without_names(line: &str, hidden: impl Fn(&str) -> bool) -> String {
    let indent = &line[..line.len() - line.trim_start().len()];
    let trimmed = line.trim();
    let names: Vec<&str> = trimmed.split(',').map(str::trim).filter(|n| !n.is_empty() && !hidden(n)).collect();
    let comma = if trimmed.ends_with(',') && !names.is_empty() { "," } else { "" };
    let end = if line.ends_with('\n') { "\n" } else { "" };
    format!("{indent}{}{comma}{end}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_names_are_no_longer_exported() {
        let hidden = |name: &str| name.starts_with("__braid_") || name == "Workflow";
        // CommonJS.
        let node = "class Workflow {\n}\nexports.Workflow = Workflow;\nexports.__braid_room = __braid_room;\nexports.run = run;\nexports.WorkflowX = WorkflowX;\n";
        assert_eq!(
            hide_exports(node, hidden),
            "class Workflow {\n}\nexports.run = run;\nexports.WorkflowX = WorkflowX;\n"
        );
        // An ES module.
        let web = "export class Workflow {\n}\nexport function __braid_room(bytes) {\n}\nexport function run(inputs) {\n}\nexport class WorkflowX {\n}\n";
        assert_eq!(hide_exports(web, hidden), "class Workflow {\n}\nfunction __braid_room(bytes) {\n}\nexport function run(inputs) {\n}\nexport class WorkflowX {\n}\n");
        // A bundler package's list of what it re-exports, on one line or several.
        let braid = |name: &str| name.starts_with("__braid_");
        let list = "export {\n    Workflow, __braid_room, __braid_run_typed_b, run, runSync\n} from \"./wf_bg.js\";\n";
        assert_eq!(hide_exports(list, braid), "export {\n    Workflow, run, runSync\n} from \"./wf_bg.js\";\n");
        let lines =
            "export {\n    Workflow, __braid_room,\n    __braid_run_typed_b,\n    run\n} from \"./wf_bg.js\";\n";
        assert_eq!(hide_exports(lines, braid), "export {\n    Workflow,\n    \n    run\n} from \"./wf_bg.js\";\n");
        let one = "export { Workflow, __braid_room, run } from \"./wf_bg.js\";\n";
        assert_eq!(hide_exports(one, braid), "export { Workflow, run } from \"./wf_bg.js\";\n");
    }
}
