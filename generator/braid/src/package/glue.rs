//! Braid's touches to wasm-bindgen's JS glue, as text in, text out: JS
//! snippets made CommonJS and put in the glue of Node packages, objects'
//! pointers (and instances) kept where callers cannot forge them, in a
//! private field rather than properties (methods of a freed, stale or
//! forged object refused in JS rather than in Wasm), Node glue made strict,
//! and raw exports declared `unknown` rather than `any`. A call that traps
//! resetting the module is `traps.rs`'s.

/// An ES module whose only exports are `export function NAME` lines (and
/// that imports nothing) as CommonJS; `None` for any other module.
pub(super) fn to_commonjs(source: &str) -> Option<String> {
    let mut names = Vec::new();
    let mut out = String::with_capacity(source.len() + 64);
    for line in source.lines() {
        if let Some(rest) = line.strip_prefix("export function ") {
            let name: String =
                rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
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
        scopes.push_str(&format!("// {path}, put here by Braid.\nconst {name} = (() => {{\n{body}}})();\n"));
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

/// How wasm-bindgen's glue passes an object's pointer to a method.
const METHOD_CALL: &str = "(this.__wbg_ptr";

/// How the glue (with a reset function) checks that a method's object
/// belongs to the current instance, before anything else, by a property a
/// caller can make a getter: the brand checks it instead.
const METHOD_STALE: &str = "if (this.__wbg_inst !== undefined && this.__wbg_inst !== __wbg_instance_id) {\n            throw new Error('Invalid stale object from previous Wasm instance');\n        }";

/// How `free()` takes the object's pointer (0 when freed already).
const FREE: &str = "const ptr = this.__destroy_into_raw();";

/// How `free()` frees the object in Wasm: at once, or throwing (through
/// Wasm's frames) if a call of the object's is running, as when its caller's
/// code (a getter of its inputs) calls `free()`. Made `_free(ptr, 1)`, as by
/// the finalizer: the object is then freed when that call returns, and it
/// is already refused by the next.
const FREE_NOW: &str = "_free(ptr, 0);";

/// How `__destroy_into_raw` reads the pointer it gives up.
const DESTROY: &str = "const ptr = this.__wbg_ptr;";

/// How the glue makes a class's FinalizationRegistry.
const CLASS_REGISTRY: &str = "Finalization = (typeof FinalizationRegistry === 'undefined')\n    ? { register: () => {}, unregister: () => {} }\n    : new FinalizationRegistry(";

/// wasm-bindgen's glue keeps an object's Wasm pointer in its `__wbg_ptr`
/// property and trusts it, and makes objects for any pointer with the
/// class's public `__wrap`: a method of a freed object passes pointer 0 to
/// Wasm (whose shim throws, each throw leaking part of wasm-bindgen's
/// stack), any caller can make an object (`Object.create(Workflow.prototype)`
/// given a `__wbg_ptr`, or `Workflow.__wrap(ptr)`) for a method to use any
/// address in Wasm memory as a `Workflow` or for `free()` to free, a
/// `Stream` can be the `this` of a `Workflow` method, and after a reset,
/// `free()` of an object of the old instance frees its pointer in the new
/// one, where it is another object's.
///
/// Here each class has a brand (`braidBrand`): a private field the glue
/// adds to each object it makes, holding a record `{ ptr, instance, held }`.
/// A private field is the object's own: no caller reads or sets it, and it
/// is not copied (`Object.assign`, spread), inherited (`Object.create`) or
/// reached through a `Proxy`. A method refuses, in JS and before Wasm, an
/// object without its class's brand, freed (`ptr` 0) or of another
/// instance; `free()` takes the pointer out of the record, so a second
/// `free()` does nothing, and frees it only in its own instance. `__wrap`
/// is taken off the class, for the glue's own calls.
///
/// While a method given a value of the caller's runs, its object is busy
/// (`busy` in the record): the caller's code that the method runs (a getter
/// of the inputs, a `Proxy` trap) cannot call the object's methods, which
/// Rust would refuse by throwing through Wasm (the object is borrowed),
/// resetting the module; they throw a plain `Error` instead. `free()` still
/// works: the object is freed when the call returns.
///
/// A `Workflow` may get its Wasm object only when first used (see
/// `fast_run.rs`, `made_later`): its record's `later` says so, and
/// `pointer` then makes it, with the class's `make`, before answering.
///
/// The record is also what the class's FinalizationRegistry holds, without
/// the unregister token wasm-bindgen gives (the object): `free()` empties
/// the record instead of unregistering, and the finalizer skips an empty
/// one. A token costs V8 a map entry per object (0.2 us of
/// `await new Workflow().next` at 64 B, measured side by side).
///
/// All or nothing: `None` when the glue has no classes, or anything it does
/// with a pointer, a registry or `__wrap` is not in the form rewritten
/// here (the caller refuses such glue: see [`has_classes`]).
pub(super) fn guard_freed_objects(glue: &str) -> Option<String> {
    if !has_classes(glue) {
        return None;
    }
    let mut out = String::with_capacity(glue.len() + 1024);
    // The class whose body a line is in, and the pointer the glue just
    // gave a new object (`obj`, `this`).
    let mut class: Option<&str> = None;
    let mut classes: Vec<&str> = Vec::new();
    let mut given: Option<(&str, &str)> = None;
    let (mut registered, mut unregistered, mut freed) = (0, 0, 0);
    for line in glue.split_inclusive('\n') {
        let statement = line.trim();
        let indent = &line[..line.len() - line.trim_start().len()];
        if let Some(name) = line.strip_prefix("export ").unwrap_or(line).strip_prefix("class ") {
            let name = name.strip_suffix(" {\n").filter(|n| is_identifier(n))?;
            class = Some(name);
            classes.push(name);
        }
        if let Some(pointer) = pointer_given(statement) {
            // Kept in the brand alone: an assignment would run a setter of
            // the caller's (a subclass's) between the Wasm call that made
            // the object and its brand.
            given = Some(pointer);
        } else if statement.ends_with(".__wbg_ptr = 0;")
            || statement.starts_with("Object.defineProperty(") && statement.contains(", '__wbg_inst', ")
        {
            // The brand takes the pointer out, and holds the instance too.
        } else if let Some((registry, object, held)) = registration(statement) {
            let name = class.filter(|name| registry.strip_suffix("Finalization") == Some(*name))?;
            let (_, ptr) = given.take().filter(|(o, _)| *o == object)?;
            // A bundler package's registry holds the pointer read back from
            // the object: the variable it was given, rather than a getter.
            let held = if held == format!("{object}.__wbg_ptr") { ptr } else { held };
            out.push_str(&format!(
                "{indent}{registry}.register({object}, braidBrand{name}.adopt({object}, {ptr}, {held}));\n"
            ));
            registered += 1;
        } else if statement.ends_with("Finalization.unregister(this);") {
            unregistered += 1;
        } else if line.contains(&format!("{METHOD_CALL}, ")) && !line.contains("___braid_") {
            // A method given a value of the caller's, whose reading may run
            // its code: the object is busy meanwhile (not a typed entry,
            // given values the glue checked: see `fast_run.rs`).
            let name = class?;
            let (ret, call) = match statement.strip_prefix("const ret = ") {
                Some(call) => (format!("{indent}let ret;\n"), format!("ret = {call}")),
                None => (String::new(), statement.to_string()),
            };
            let call = call.replacen(METHOD_CALL, "(braidPtr", 1);
            out.push_str(&format!(
                "{ret}{indent}const braidPtr = braidBrand{name}.enter(this);\n\
                 {indent}try {{\n{indent}    {call}\n{indent}}} finally {{\n{indent}    braidBrand{name}.leave(this);\n{indent}}}\n"
            ));
        } else if line.contains(METHOD_CALL) || line.contains(FREE) || line.contains(DESTROY) {
            let name = class?;
            freed += usize::from(line.contains(FREE));
            out.push_str(
                &line
                    .replace(METHOD_CALL, &format!("(braidBrand{name}.pointer(this)"))
                    .replace(FREE, &format!("const ptr = braidBrand{name}.take(braidObject(this)); if (!ptr) return;"))
                    .replace(DESTROY, &format!("const ptr = braidBrand{name}.take(this);")),
            );
        } else if let (Some(name), "}") = (class, line.trim_end()) {
            // After the class: its brand, and `__wrap` for the glue alone.
            out.push_str(line);
            out.push_str(&format!(
                "const braidBrand{name} = braidBrand('{name}');\n\
                 const braidWrap{name} = {name}.__wrap;\n\
                 delete {name}.__wrap;\n"
            ));
            class = None;
        } else {
            out.push_str(line);
        }
    }
    let mut out = out
        .replace(METHOD_STALE, "braidObject(this);")
        .replace(FREE_NOW, "_free(ptr, 1);")
        .replace(CLASS_REGISTRY, &CLASS_REGISTRY.replace("new FinalizationRegistry(", "braidFinalizationRegistry("));
    for name in &classes {
        out = out.replace(&format!("{name}.__wrap("), &format!("braidWrap{name}("));
    }
    // Every class rewritten whole, and no pointer read or `__wrap` call left.
    let whole = registered == glue.matches("Finalization.register(").count()
        && unregistered == glue.matches("Finalization.unregister(").count()
        && unregistered == classes.len()
        && freed == classes.len()
        && glue.matches(DESTROY).count() == classes.len()
        && glue.matches(FREE_NOW).count() == classes.len()
        && glue.matches(CLASS_REGISTRY).count() == classes.len()
        && !out.contains(".__wrap(")
        && !out.contains("__wbg_ptr")
        && out.matches("__wbg_inst").count() == out.matches("__wbg_instance_id").count();
    if !whole {
        return None;
    }
    // The brands read the current instance's id; a glue without a reset
    // function has one instance.
    let declared = ["let", "var", "const"].iter().any(|k| glue.contains(&format!("{k} __wbg_instance_id")));
    let one_instance = if declared { "" } else { "const __wbg_instance_id = 0;\n" };
    out.insert_str(top(&out), &format!("{OBJECT_HELPERS}{one_instance}"));
    Some(out)
}

/// Whether wasm-bindgen's glue has classes (objects with a Wasm pointer),
/// which [`guard_freed_objects`] must rewrite for the glue to be shipped.
pub(super) fn has_classes(glue: &str) -> bool {
    glue.contains("Finalization.register(") || glue.contains("__wbg_ptr")
}

/// `OBJECT.__wbg_ptr = PTR;` (of a new object, or the `= 0` of a freed one).
fn pointer_given(statement: &str) -> Option<(&str, &str)> {
    let (object, ptr) = statement.strip_suffix(';')?.split_once(".__wbg_ptr = ")?;
    (is_identifier(object) && is_identifier(ptr)).then_some((object, ptr))
}

/// `REGISTRY.register(OBJECT, HELD, OBJECT);` of a class's registry.
fn registration(statement: &str) -> Option<(&str, &str, &str)> {
    let (registry, rest) = statement.split_once(".register(")?;
    let (object, rest) = rest.split_once(", ")?;
    let held = rest.strip_suffix(");")?.strip_suffix(object)?.strip_suffix(", ")?;
    (is_identifier(registry) && is_identifier(object)).then_some((registry, object, held))
}

fn is_identifier(text: &str) -> bool {
    text.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
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
fn declares(glue: &str, name: &str) -> bool {
    let identifier = |text: &str| -> String {
        text.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect()
    };
    glue.lines().any(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line);
        if let Some(list) = ["let ", "const ", "var "].iter().find_map(|k| line.strip_prefix(k)) {
            list.split(';').next().unwrap_or("").split(',').any(|declarator| identifier(declarator) == name)
        } else {
            ["function ", "class ", "import * as "]
                .iter()
                .find_map(|k| line.strip_prefix(k))
                .is_some_and(|rest| identifier(rest) == name)
        }
    })
}

/// What [`guard_freed_objects`]' glue calls, put at the glue's top (it
/// runs as the module loads: each class's brand is made right after the
/// class): Braid's own JavaScript, `glue/objects.js`.
pub(super) const OBJECT_HELPERS: &str = include_str!("glue/objects.js");

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
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
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
            "/* @ts-self-types=\"./wf.d.ts\" */\n// ./snippets/s/x.js, put here by Braid.\nconst braidSnippet0 = (() => {\nlet n = 1;\nfunction a() {\n  return n;\n}\nreturn { a };\n})();\nconst { a } = braidSnippet0;\nconst import1 = braidSnippet0;\n"
        );
        // A snippet required some other way, or one that is not plain, is not inlined.
        assert_eq!(inline_snippets("require(\"./snippets/s/other.js\");\n", &snippets), None);
        assert_eq!(inline_snippets(glue, &[("./snippets/s/x.js".into(), "export default 1;\n".into())]), None);
    }

    /// A class as wasm-bindgen 0.2.130 writes it with a reset function
    /// (Node, web); `PTR_READ` is how its registry holds the pointer.
    const CLASS: &str = "class Workflow {
    static __wrap(ptr) {
        const obj = Object.create(Workflow.prototype);
        obj.__wbg_ptr = ptr;
        WorkflowFinalization.register(obj, { ptr, instance: __wbg_instance_id }, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        WorkflowFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_workflow_free(ptr, 0);
    }
    constructor() {
        const ret = wasm.workflow_new();
        this.__wbg_ptr = ret;
        WorkflowFinalization.register(this, { ptr: ret, instance: __wbg_instance_id }, this);
        return this;
    }
    next(inputs) {
        if (this.__wbg_inst !== undefined && this.__wbg_inst !== __wbg_instance_id) {
            throw new Error('Invalid stale object from previous Wasm instance');
        }
        const ret = wasm.workflow_next(this.__wbg_ptr, inputs);
        return ret;
    }
    static resume(state) {
        const ret = wasm.workflow_resume(state);
        return Workflow.__wrap(ret);
    }
}
let __wbg_instance_id = 0;
const WorkflowFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(({ ptr, instance }) => {
    if (instance === __wbg_instance_id) wasm.__wbg_workflow_free(ptr, 1);
});
";

    #[test]
    fn objects_pointers_are_kept_where_callers_cannot_forge_them() {
        let glue = format!("/* @ts-self-types=\"./wf.d.ts\" */\n{CLASS}");
        let guarded = guard_freed_objects(&glue).unwrap();
        for expected in [
            "WorkflowFinalization.register(obj, braidBrandWorkflow.adopt(obj, ptr, { ptr, instance: __wbg_instance_id }));\n",
            "WorkflowFinalization.register(this, braidBrandWorkflow.adopt(this, ret, { ptr: ret, instance: __wbg_instance_id }));\n",
            "const ptr = braidBrandWorkflow.take(this);\n        return ptr;\n",
            "const ptr = braidBrandWorkflow.take(braidObject(this)); if (!ptr) return;\n",
            "braidObject(this);\n        let ret;\n        const braidPtr = braidBrandWorkflow.enter(this);\n        try {\n            ret = wasm.workflow_next(braidPtr, inputs);\n        } finally {\n            braidBrandWorkflow.leave(this);\n        }\n",
            "return braidWrapWorkflow(ret);",
            "}\nconst braidBrandWorkflow = braidBrand('Workflow');\nconst braidWrapWorkflow = Workflow.__wrap;\ndelete Workflow.__wrap;\n",
            ": braidFinalizationRegistry(({ ptr, instance }) => {",
            "const record = { ptr, instance: __wbg_instance_id, held, busy: false, later: 0 };",
        ] {
            assert!(guarded.contains(expected), "{expected:?} in {guarded}");
        }
        // The helpers come first (after the types comment): they run as the module loads.
        assert!(guarded.starts_with("/* @ts-self-types=\"./wf.d.ts\" */\n// Added by Braid"), "{guarded}");
        // The glue neither sets nor reads a property a caller could make a setter or getter.
        assert!(!guarded.contains("__wbg_ptr") && !guarded.contains("__wbg_inst "), "{guarded}");

        // A bundler package: one instance, and the registry holds the pointer.
        let bundler = CLASS
            .replace("{ ptr, instance: __wbg_instance_id }, obj", "obj.__wbg_ptr, obj")
            .replace("{ ptr: ret, instance: __wbg_instance_id }, this", "this.__wbg_ptr, this")
            .replace("let __wbg_instance_id = 0;\n", "");
        let guarded = guard_freed_objects(&bundler).unwrap();
        assert!(guarded.contains("register(obj, braidBrandWorkflow.adopt(obj, ptr, ptr));"), "{guarded}");
        assert!(guarded.contains("register(this, braidBrandWorkflow.adopt(this, ret, ret));"), "{guarded}");
        // One instance, whose id is 0.
        assert!(guarded.contains("\nconst __wbg_instance_id = 0;\n"), "{guarded}");

        // Glue without classes is left alone; with classes in any other
        // form, nothing is rewritten (and the package is refused).
        assert_eq!(guard_freed_objects("export function run(inputs) {}\n"), None);
        for (what, from, to) in [
            ("a registration", "register(obj, { ptr, instance: __wbg_instance_id }, obj);", "register(obj, ptr);"),
            ("a pointer given", "        obj.__wbg_ptr = ptr;\n", ""),
            (
                "a registry",
                "    : new FinalizationRegistry(({ ptr, instance }) => {",
                "    : new  FinalizationRegistry(({ ptr, instance }) => {",
            ),
            ("free()", "const ptr = this.__destroy_into_raw();", "const ptr = this.__destroy_into_raw(0);"),
            ("a pointer read", "workflow_next(this.__wbg_ptr, inputs)", "workflow_next(inputs, this.__wbg_ptr)"),
            ("a __wrap", "return Workflow.__wrap(ret);", "return (Workflow).__wrap(ret);"),
        ] {
            assert_eq!(guard_freed_objects(&CLASS.replace(from, to)), None, "{what}");
        }
        let outside = format!("{CLASS}function f() {{\n    return wasm.workflow_done(this.__wbg_ptr);\n}}\n");
        assert_eq!(guard_freed_objects(&outside), None);
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
