//! Braid's touches to wasm-bindgen's JS glue, as text in, text out: JS
//! snippets made CommonJS and put in the glue of Node packages, Node glue
//! made strict, raw exports declared `unknown` rather than `any`, and what
//! Braid's own JavaScript takes from the glue checked declared there. The
//! package's API is `api.rs`'s; a call that traps resetting the module is
//! `traps.rs`'s.

/// An ES module whose only exports are `export function NAME` lines (and
/// that imports nothing) as CommonJS; `None` for any other module.
pub(super) fn to_commonjs(source: &str) -> Option<String> {
    let mut names = Vec::new();
    let mut out = String::with_capacity(source.len() + 64);
    for line in source.lines() {
        if let Some(rest) = line.strip_prefix("export function ") {
            let name = identifier_at(rest);
            if name.is_empty() {
                return None;
            }
            names.push(name);
            out.push_str("function ");
            out.push_str(rest);
        } else if line.starts_with("export") || line.starts_with("import") {
            return None;
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push_str(&format!("module.exports = {{ {} }};\n", names.join(", ")));
    Some(out)
}

/// wasm-bindgen's Node glue `require`s each crate's JS snippet
/// (`./snippets/<crate>/...js`, an ES module) as a file of its own, and
/// Node resolves, reads and compiles each at start-up: about a millisecond
/// of a cold start. Here every snippet, made CommonJS (see [`to_commonjs`]),
/// is put in the glue once, as a function's scope at its top, and each of
/// its `require`s names that scope's exports instead. `snippets` pairs the
/// path the glue requires (`./snippets/...`) with the snippet's ES source.
/// `None` when a snippet cannot be converted or a snippet is required in
/// a way not replaced here (the glue would then need the files).
pub(super) fn inline_snippets(glue: &str, snippets: &[(String, String)]) -> Option<String> {
    let mut scopes = String::new();
    let mut out = glue.to_string();
    for (i, (path, source)) in snippets.iter().enumerate() {
        let commonjs = to_commonjs(source)?;
        let body = commonjs.replace("\nmodule.exports = {", "\nreturn {");
        let name = format!("braidSnippet{i}");
        // The snippet sees the global `WebAssembly`, not the glue's
        // (`traps.rs`), which is not made yet as snippets load.
        scopes.push_str(&format!(
            "// {path}, put here by Braid.\nconst {name} = ((WebAssembly) => {{\n{body}}})(globalThis.WebAssembly);\n"
        ));
        for required in [format!("require(String.raw`{path}`)"), format!("require(\"{path}\")")] {
            out = out.replace(&required, &name);
        }
    }
    // The import object's keys name the snippets too (as the module's
    // import names): only a `require` of one would need the files.
    if out.contains("require(String.raw`./snippets/") || out.contains("require(\"./snippets/") {
        return None;
    }
    out.insert_str(top(&out), &scopes);
    Some(out)
}

/// Where code put at the top of the glue goes: after the first line when it
/// is the glue's `@ts-self-types` comment.
pub(super) fn top(glue: &str) -> usize {
    if glue.starts_with("/* @ts-self-types") {
        glue.find('\n').map_or(glue.len(), |i| i + 1)
    } else {
        0
    }
}

/// A Node package's glue (CommonJS, sloppy mode unless it says otherwise)
/// in strict mode: a sloppy function is reachable by anyone who sees it in
/// a stack trace (`Error.prepareStackTrace`'s `getFunction()`), the glue's
/// own functions included, such as the typed entries that take inputs
/// nobody checked (see `fast_run.rs`). An ES module is strict already.
pub(super) fn strict(glue: &str) -> String {
    let mut out = glue.to_string();
    out.insert_str(top(glue), "'use strict';\n");
    out
}

/// The first name a file of Braid's JavaScript takes from the glue's scope
/// that `glue` does not declare (as a function, class, `let`, `const`,
/// `var` or namespace import), if any. What a file takes is its ESLint
/// `/* global */` comment, which `make test-lint` checks the file against:
/// a name wasm-bindgen renames fails the package's build here, rather than
/// its users' calls.
pub(super) fn undeclared<'a>(file: &'a str, glue: &str) -> Option<&'a str> {
    let list = file.split_once("/* global ")?.1.split_once("*/")?.0;
    let names = list.split(',').map(|entry| entry.split(':').next().unwrap_or("").trim());
    names.filter(|name| !name.is_empty()).find(|name| !declares(glue, name))
}

/// Whether a line of `glue` declares `name`: a function, class or namespace
/// import of that name, or a `let`, `const` or `var` naming it among its
/// declarators (`let wasmModule, wasmInstance, wasm;`).
pub(super) fn declares(glue: &str, name: &str) -> bool {
    glue.lines().any(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line);
        if let Some(list) = ["let ", "const ", "var "].iter().find_map(|k| line.strip_prefix(k)) {
            list.split(';')
                .next()
                .unwrap_or("")
                .split(',')
                .any(|declarator| identifier_at(declarator.trim_start()) == name)
        } else {
            ["function ", "class ", "import * as "]
                .iter()
                .find_map(|k| line.strip_prefix(k))
                .is_some_and(|rest| identifier_at(rest) == name)
        }
    })
}

/// Whether `c` is one of the characters of a JS identifier (ASCII, as
/// wasm-bindgen and Braid write them).
pub(super) fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The identifier `text` starts with (empty if none).
pub(super) fn identifier_at(text: &str) -> &str {
    &text[..text.find(|c| !is_identifier_char(c)).unwrap_or(text.len())]
}

/// wasm-bindgen declares the module's raw exports (`InitOutput` of the web
/// package, the `_bg.wasm.d.ts` of every package) with `any` for the
/// values they pass; they are `unknown` here, so no declaration a package
/// ships says `any`. `None` when there is nothing to change.
pub(super) fn raw_exports_unknown(dts: &str) -> Option<String> {
    let mut changed = false;
    let lines: Vec<String> = dts
        .lines()
        .map(|line| {
            let declaration = line.trim_start();
            let raw = (declaration.starts_with("readonly ") || declaration.starts_with("export const "))
                && declaration.contains(": (");
            if !raw {
                return line.to_string();
            }
            let replaced = replace_word(line, "any", "unknown");
            changed |= replaced != line;
            replaced
        })
        .collect();
    changed.then(|| lines.join("\n") + if dts.ends_with('\n') { "\n" } else { "" })
}

/// `text` with each whole word `word` (not part of a longer identifier) replaced.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_ident = is_identifier_char;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + word.len()..].chars().next();
        out.push_str(&rest[..i]);
        out.push_str(if before.is_some_and(is_ident) || after.is_some_and(is_ident) { word } else { with });
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_become_commonjs() {
        let esm = "const a = 1;\nexport function braidOne(x) {\n  return x + a;\n}\nexport function two$() {}\n";
        assert_eq!(
            to_commonjs(esm).unwrap(),
            "const a = 1;\nfunction braidOne(x) {\n  return x + a;\n}\nfunction two$() {}\nmodule.exports = { braidOne, two$ };\n"
        );
        // Anything else is refused rather than half converted.
        assert_eq!(to_commonjs("export const a = 1;\n"), None);
        assert_eq!(to_commonjs("export default function () {}\n"), None);
        assert_eq!(to_commonjs("import x from 'y';\n"), None);
        assert_eq!(to_commonjs("export function (x) {}\n"), None);
    }

    #[test]
    fn node_glue_takes_its_snippets_in() {
        let glue = "/* @ts-self-types=\"./wf.d.ts\" */\nconst { a } = require(String.raw`./snippets/s/x.js`);\nconst import1 = require(\"./snippets/s/x.js\");\n";
        let snippets =
            [("./snippets/s/x.js".to_string(), "let n = 1;\nexport function a() {\n  return n;\n}\n".to_string())];
        let inlined = inline_snippets(glue, &snippets).unwrap();
        assert_eq!(
            inlined,
            "/* @ts-self-types=\"./wf.d.ts\" */\n// ./snippets/s/x.js, put here by Braid.\nconst braidSnippet0 = ((WebAssembly) => {\nlet n = 1;\nfunction a() {\n  return n;\n}\nreturn { a };\n})(globalThis.WebAssembly);\nconst { a } = braidSnippet0;\nconst import1 = braidSnippet0;\n"
        );
        // A snippet required some other way, or one that is not plain, is not inlined.
        assert_eq!(inline_snippets("require(\"./snippets/s/other.js\");\n", &snippets), None);
        assert_eq!(inline_snippets(glue, &[("./snippets/s/x.js".into(), "export default 1;\n".into())]), None);
    }

    #[test]
    fn what_braids_javascript_takes_from_the_glue_is_declared_there() {
        let file = "// From the glue.\n/* global wasm, WASM_VECTOR_LEN:writable, braidSupport */\nwasm.run();\n";
        let glue = "let wasmModule, wasm;\nfunction f() {\n    let WASM_VECTOR_LEN = 0;\n}\nconst braidSupport = require(\"./s.js\");\n";
        assert_eq!(undeclared(file, glue), None);
        let glue = "export function wasm () {}\nvar WASM_VECTOR_LEN;\nimport * as braidSupport from \"./s.js\";\n";
        assert_eq!(undeclared(file, glue), None);
        // Named but not declared, or declared under a longer name.
        assert_eq!(
            undeclared(file, "let wasm;\nconst braidSupport = 1;\nf(WASM_VECTOR_LEN);\n"),
            Some("WASM_VECTOR_LEN")
        );
        assert_eq!(
            undeclared(file, "let wasmInstance;\nlet WASM_VECTOR_LEN;\nconst braidSupport = 1;\n"),
            Some("wasm")
        );
        assert_eq!(undeclared(file, "let x = 'let wasm';\n"), Some("wasm"));
        // A file that takes nothing.
        assert_eq!(undeclared("function braidOne() {}\n", ""), None);
    }

    #[test]
    fn raw_exports_are_declared_unknown_not_any() {
        let dts = "/** of any length */\nexport interface InitOutput {\n  readonly run: (a: any) => any;\n  readonly next: (a: number, b: any) => [number, anyhow];\n}\n";
        let typed = raw_exports_unknown(dts).unwrap();
        assert_eq!(typed, "/** of any length */\nexport interface InitOutput {\n  readonly run: (a: unknown) => unknown;\n  readonly next: (a: number, b: unknown) => [number, anyhow];\n}\n");
        assert_eq!(raw_exports_unknown("export const memory: WebAssembly.Memory;\n"), None);
        assert_eq!(
            raw_exports_unknown("export const run: (a: any) => void;\n").unwrap(),
            "export const run: (a: unknown) => void;\n"
        );
    }

    #[test]
    fn braid_supports_snippet_converts() {
        let source = std::str::from_utf8(crate::sources::file("operations/support/src/wasm.js").unwrap()).unwrap();
        let commonjs = to_commonjs(source).unwrap();
        assert!(commonjs.contains("module.exports = { braidByteLength, "), "{commonjs}");
    }
}
