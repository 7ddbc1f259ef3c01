//! Braid's touches to wasm-bindgen's JS glue, as text in, text out:
//! braid-support's JavaScript bound in the glue's scope, Node glue made
//! strict, raw exports declared `unknown` rather than `any`, and what
//! Braid's own JavaScript takes from the glue checked declared there. The
//! package's API is `api.rs`'s; a call that traps resetting the module is
//! `traps.rs`'s.

/// braid-support's JavaScript, which its Rust imports from the glue's
/// scope by namespace (`js_namespace = braidSupport`), not as snippets:
/// each namespace and the file of braid-support's sources that is its
/// body (the Wasm boundary's reads of callers' values, `runStream`'s
/// reader). Braid's own files, as the `braid` that packages ships them.
const SUPPORT: [(&str, &str); 2] =
    [("braidSupport", "operations/support/src/wasm.js"), ("braidStreams", "operations/support/src/workflow/stream.js")];

/// The glue with each of braid-support's namespaces it names (see
/// [`SUPPORT`]) bound at its top, made from the file by [`namespace`]:
/// every target's glue the same way, and no file for a package to load
/// besides its glue. wasm-bindgen's text is left as it is: its import
/// shims call `braidSupport.braidByteLength(...)`, which the glue's scope
/// now declares.
pub(super) fn bind_support(glue: &str) -> String {
    let mut scopes = String::new();
    for (name, path) in SUPPORT {
        if glue.contains(&format!("{name}.")) {
            let source = crate::sources::file(path).and_then(|bytes| std::str::from_utf8(bytes).ok());
            let source = source.unwrap_or_else(|| panic!("braid was built without {path}"));
            // Braid's own file, checked by `braid_supports_files_are_namespaces`.
            let scope = namespace(name, path, source).unwrap_or_else(|| panic!("{path} is not a namespace's body"));
            scopes.push_str(&scope);
        }
    }
    let mut out = glue.to_string();
    out.insert_str(top(glue), &scopes);
    out
}

/// An ES module whose only exports are `export function NAME` lines (and
/// that imports nothing) as the statement declaring `name`, an object of
/// those functions, made in a scope of their own; `None` for any other
/// module. The module sees the global `WebAssembly`, not the glue's
/// (`traps.rs`), which is not made yet as the glue's top runs.
pub(super) fn namespace(name: &str, path: &str, source: &str) -> Option<String> {
    let mut names = Vec::new();
    let mut body = String::with_capacity(source.len() + 64);
    for line in source.lines() {
        if let Some(rest) = line.strip_prefix("export function ") {
            let name = identifier_at(rest);
            if name.is_empty() {
                return None;
            }
            names.push(name);
            body.push_str("function ");
            body.push_str(rest);
        } else if line.starts_with("export") || line.starts_with("import") {
            return None;
        } else {
            body.push_str(line);
        }
        body.push('\n');
    }
    Some(format!(
        "// braid-support's {path}, put here by Braid (package/glue.rs).\n\
         const {name} = ((WebAssembly) => {{\n{body}return {{ {} }};\n}})(globalThis.WebAssembly);\n",
        names.join(", ")
    ))
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

/// Whether a line of `glue` declares a static method `name` of a class
/// (`    static run(inputs) {`): how wasm-bindgen declares an associated
/// function of a Rust type it exports.
pub(super) fn declares_static(glue: &str, name: &str) -> bool {
    glue.lines().any(|line| line.trim_start().strip_prefix("static ").is_some_and(|rest| identifier_at(rest) == name))
}

/// Whether `c` is one of the characters of a JS identifier (ASCII, as
/// wasm-bindgen and Braid write them).
fn is_identifier_char(c: char) -> bool {
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
    fn modules_of_functions_become_namespaces() {
        let esm = "const a = 1;\nexport function braidOne(x) {\n  return x + a;\n}\nexport function two$() {}\n";
        assert_eq!(
            namespace("ns", "x.js", esm).unwrap(),
            "// braid-support's x.js, put here by Braid (package/glue.rs).\nconst ns = ((WebAssembly) => {\nconst a = 1;\nfunction braidOne(x) {\n  return x + a;\n}\nfunction two$() {}\nreturn { braidOne, two$ };\n})(globalThis.WebAssembly);\n"
        );
        // Anything else is refused rather than half converted.
        for refused in [
            "export const a = 1;\n",
            "export default function () {}\n",
            "import x from 'y';\n",
            "export function (x) {}\n",
        ] {
            assert_eq!(namespace("ns", "x.js", refused), None, "{refused}");
        }
    }

    #[test]
    fn the_glue_binds_the_namespaces_it_names() {
        let glue =
            "/* @ts-self-types=\"./wf.d.ts\" */\nfunction f(a) {\n    return braidSupport.braidByteLength(a);\n}\n";
        let bound = bind_support(glue);
        let (head, tail) = bound.split_once("})(globalThis.WebAssembly);\n").unwrap();
        assert!(
            head.starts_with("/* @ts-self-types=\"./wf.d.ts\" */\n// braid-support's operations/support/src/wasm.js"),
            "{head}"
        );
        assert!(
            head.contains("\nconst braidSupport = ((WebAssembly) => {\n")
                && head.contains("return { braidByteLength, "),
            "{head}"
        );
        assert!(!head.contains("braidStreams"), "only what the glue names");
        assert_eq!(tail, &glue[glue.find('\n').unwrap() + 1..]);
        // A glue naming none is left as it is.
        assert_eq!(bind_support("let wasm;\n"), "let wasm;\n");
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
    fn static_methods_are_found_by_name() {
        let glue = "class Workflow {\n    static runSync(inputs) {\n    }\n    static __wrap(ptr) {\n    }\n}\n";
        assert!(declares_static(glue, "runSync") && declares_static(glue, "__wrap"));
        assert!(!declares_static(glue, "run") && !declares_static(glue, "Workflow"));
        assert!(!declares_static("function runSync(inputs) {\n}\n", "runSync"));
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
    fn braid_supports_files_are_namespaces() {
        for (name, path) in SUPPORT {
            let source = std::str::from_utf8(crate::sources::file(path).unwrap()).unwrap();
            assert!(namespace(name, path, source).unwrap().contains(&format!("const {name} = ")), "{path}");
        }
    }
}
