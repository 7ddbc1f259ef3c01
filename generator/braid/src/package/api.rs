//! A workflow package's API: Braid's own JavaScript (`glue/api.js`), whose
//! `Workflow` and `Stream` own their Wasm objects by pointer where callers
//! cannot reach them, put at the end of the glue and exported, the only
//! exports of the package but the reset. wasm-bindgen's glue exports none
//! of its own: the template makes its classes `private` and the package's
//! functions static methods of its `Workflow` (`Workflow.run`), which the
//! API is handed by name.

use super::fast_run::TypedEntries;
use super::glue::{declares, declares_static};

/// wasm-bindgen's classes, which the glue declares and does not export.
const CLASSES: [&str; 2] = ["Workflow", "Stream"];

/// The package's functions, static methods of wasm-bindgen's `Workflow`.
const FUNCTIONS: [&str; 5] = ["run", "runSync", "runMany", "stream", "runStream"];

/// A workflow package's glue with Braid's API, and the names the API is
/// exported under (which a bundler package's entry then re-exports).
#[derive(Debug, PartialEq)]
pub(super) struct Api {
    pub glue: String,
    pub exports: Vec<&'static str>,
}

/// `glue/api.js`: Braid's own JavaScript, `braidApi`.
pub(super) const API_JS: &str = include_str!("glue/api.js");

/// Which packages the API calls a form of the glue in.
#[derive(Clone, Copy, PartialEq)]
enum When {
    Always,
    /// A workflow that streams (wasm-bindgen's `Stream`).
    Streams,
}

/// What the API calls of wasm-bindgen's glue for a class's objects, which
/// it owns by pointer, each as the glue's own code has it: the raw exports
/// that make one (a pointer, or a `Result` whose error is in the externref
/// table) and free one, and the methods, which read the pointer and the
/// instance id from their object's properties.
const CLASS_CALLS: [(When, &str); 6] = [
    (When::Always, "wasm.workflow_new();\n        this.__wbg_ptr = ret;\n"),
    (When::Always, "wasm.workflow_resume(state);\n        if (ret[2]) {\n            throw takeFromExternrefTable0(ret[1]);\n        }\n        return Workflow.__wrap(ret[0]);\n"),
    (When::Always, "wasm.__wbg_workflow_free("),
    (When::Always, "(this.__wbg_ptr"),
    (When::Streams, "wasm.__wbg_stream_free("),
    (When::Streams, "wasm.workflow_stream();\n        if (ret[2]) {\n            throw takeFromExternrefTable0(ret[1]);\n        }\n        return Stream.__wrap(ret[0]);\n"),
];

/// The glue of a workflow package (one with wasm-bindgen's `Workflow`)
/// with Braid's API after it: `glue/api.js`, then the call of `braidApi`
/// with what it needs of the glue (by pointer, its classes' objects: see
/// [`CLASS_CALLS`]; its static methods; the typed entries', see
/// `fast_run.rs`), then the API's exports, as CommonJS's `exports.NAME`
/// or, when `module`, an ES module's `export`. `Ok(None)` for other glue (an
/// operation's, a bundler package's entry); `Err` naming what the API
/// needs that the glue does not have in the form called here.
pub(super) fn api(glue: &str, typed: &TypedEntries, module: bool) -> Result<Option<Api>, &'static str> {
    if !declares(glue, "Workflow") {
        return Ok(None);
    }
    let classes: Vec<&'static str> = CLASSES.into_iter().filter(|name| declares(glue, name)).collect();
    let functions: Vec<&'static str> = FUNCTIONS.into_iter().filter(|name| declares_static(glue, name)).collect();
    let streams = classes.contains(&"Stream");
    let needed = |when| when == When::Always || when == When::Streams && streams;
    if let Some((_, call)) = CLASS_CALLS.into_iter().find(|(when, call)| needed(*when) && !glue.contains(call)) {
        return Err(call);
    }
    let mut out = glue.to_string();
    // Each call of the glue's own exports runs its guard first, as its
    // functions do, where it has one (a Node or web package's).
    let guard = if declares(glue, "__wbg_call_guard") { "__wbg_call_guard(), " } else { "" };
    let mut workflow = vec![
        "view: braidViews(Workflow)".to_string(),
        format!("make: () => ({guard}wasm.workflow_new() >>> 0)"),
        format!("resume: (state) => ({guard}braidTaken(wasm.workflow_resume(state)))"),
        format!("free: (ptr) => ({guard}wasm.__wbg_workflow_free(ptr, 1))"),
    ];
    if typed.next.is_some() {
        workflow.push(format!("finished: () => ({guard}wasm.__braid_finished() >>> 0)"));
        workflow.push(format!("kept: () => ({guard}wasm.__braid_kept() >>> 0)"));
    }
    let mut given = vec![format!("Workflow: {{\n        {},\n    }}", workflow.join(",\n        "))];
    if streams {
        given.push(format!(
            "Stream: {{\n        view: braidViews(Stream),\n        make: () => ({guard}braidTaken(wasm.workflow_stream())),\n        \
             free: (ptr) => ({guard}wasm.__wbg_stream_free(ptr, 1)),\n    }}"
        ));
    }
    // Each function but `stream`, whose streams the API makes (`make` above).
    let called = functions.iter().filter(|name| **name != "stream");
    given.extend(called.map(|name| format!("{name}: Workflow.{name}")));
    // A bundler package has one instance, whose id is 0.
    let instance = if declares(glue, "__wbg_instance_id") { "__wbg_instance_id" } else { "0" };
    given.push(format!("instance: () => {instance}"));
    // Each typed entry called with the items read as its arguments, one
    // by one rather than spread: a string as it is, a `Uint8Array` copied
    // into Wasm memory by `braidPassBytes`, as its address and length. The
    // static method is taken once, and called as a plain function (it
    // reads no `this`): no property of the class is looked up per call.
    let entry = |name: &str, kinds: &str| {
        let items: Vec<String> = (kinds.bytes().enumerate())
            .map(|(i, kind)| match kind {
                b'b' => format!("braidPassBytes(items[{i}], {i}), braidLengths[{i}]"),
                _ => format!("items[{i}]"),
            })
            .collect();
        format!(
            "{{ kinds: '{kinds}', call: ((entry) => (items) => entry({}))(Workflow.{name}{kinds}) }}",
            items.join(", ")
        )
    };
    if let Some(kinds) = &typed.run {
        given.push(format!("runTyped: {}", entry("__braid_run_typed_", kinds)));
    }
    if let Some(kinds) = &typed.next {
        given.push(format!("nextTyped: {}", entry("__braid_next_fresh_typed_", kinds)));
    }
    if *typed != TypedEntries::default() {
        given.push("items: braidItems, takeSlow: braidTakeSlow, fits: braidFits".into());
    }
    out.push('\n');
    out.push_str(API_JS);
    out.push_str(&format!(
        "// Put here by Braid (package/api.rs): the package's API, over wasm-bindgen's.\n\
         /**\n \
         * Views of wasm-bindgen's `Class`'s Wasm objects: objects with its\n \
         * methods, given a pointer and the instance's id as fields (defined,\n \
         * so no setter of the caller's on a prototype is run or handed one).\n \
         */\n\
         function braidViews(Class) {{\n    \
         class View {{\n        \
         __wbg_ptr = 0;\n        \
         __wbg_inst = {instance};\n        \
         constructor(ptr) {{\n            \
         this.__wbg_ptr = ptr;\n        \
         }}\n    \
         }}\n    \
         Object.setPrototypeOf(View.prototype, Class.prototype);\n    \
         return (ptr) => new View(ptr);\n\
         }}\n\
         /** The pointer a raw export gave as a `Result`, or its error thrown. */\n\
         function braidTaken(ret) {{\n    \
         if (ret[2]) throw takeFromExternrefTable0(ret[1]);\n    \
         return ret[0] >>> 0;\n\
         }}\n\
         const braidPackage = braidApi({{\n{}}});\n",
        given.iter().map(|line| format!("    {line},\n")).collect::<String>()
    ));
    // What the glue makes of a stream Rust hands to JS (`runStream`'s) is
    // the API's too.
    if streams {
        out.push_str("Stream.__wrap = braidPackage.adoptStream;\n");
    }
    // Bound to names of their own (an ES module's glue declares
    // wasm-bindgen's), then exported under the API's.
    let present: Vec<&'static str> = classes.into_iter().chain(functions).collect();
    let local = |name: &str| format!("braid_{name}");
    let locals: Vec<String> = present.iter().map(|name| format!("{name}: {}", local(name))).collect();
    out.push_str(&format!("const {{ {} }} = braidPackage;\n", locals.join(", ")));
    let named: Vec<(&str, String)> = present.iter().map(|name| (*name, local(name))).collect();
    out.push_str(&export_as(module, &named));
    Ok(Some(Api { glue: out, exports: present }))
}

/// The glue's statement exporting each `(name, local)` pair's `local` (a
/// name in the glue's scope) as `name`: an ES module's `export { local as
/// name };`, or CommonJS's `exports.name = local;` for each.
fn export_as(module: bool, names: &[(&str, String)]) -> String {
    if module {
        let list: Vec<String> = names.iter().map(|(name, local)| format!("{local} as {name}")).collect();
        format!("export {{ {} }};\n", list.join(", "))
    } else {
        names.iter().map(|(name, local)| format!("exports.{name} = {local};\n")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wasm-bindgen 0.2.130's glue for a workflow that streams, as an ES
    /// module with a reset function (abridged: what `api` reads). Its
    /// classes are declared, not exported.
    const GLUE: &str = "let __wbg_instance_id = 0;\nfunction __wbg_call_guard() {\n}\nclass Stream {\n    free() {\n        wasm.__wbg_stream_free(ptr, 0);\n    }\n    update(chunk) {\n        wasm.stream_update(this.__wbg_ptr, chunk);\n    }\n}\n\
        class Workflow {\n    constructor() {\n        ret = wasm.workflow_new();\n        this.__wbg_ptr = ret;\n    }\n    free() {\n        wasm.__wbg_workflow_free(ptr, 0);\n    }\n\
            static resume(state) {\n        ret = wasm.workflow_resume(state);\n        if (ret[2]) {\n            throw takeFromExternrefTable0(ret[1]);\n        }\n        return Workflow.__wrap(ret[0]);\n    }\n\
            static runMany(list) {\n    }\n    static runStream(source) {\n    }\n    static runSync(inputs) {\n    }\n    static run(inputs) {\n    }\n\
            static stream() {\n        let ret;\n        __wbg_call_guard();\n        ret = wasm.workflow_stream();\n        if (ret[2]) {\n            throw takeFromExternrefTable0(ret[1]);\n        }\n        return Stream.__wrap(ret[0]);\n    }\n}\n\
        export function __wbg_reset_state () {\n}\n";

    #[test]
    fn braids_api_is_what_the_package_exports() {
        let typed = TypedEntries { run: Some("bs".into()), next: Some("b".into()) };
        let Api { glue: out, exports } = api(GLUE, &typed, true).unwrap().unwrap();
        // wasm-bindgen's glue as it was, then Braid's API.
        assert!(out.starts_with(GLUE), "{out}");
        assert!(out[GLUE.len()..].starts_with(&format!("\n{API_JS}")), "{out}");
        assert_eq!(exports, ["Workflow", "Stream", "run", "runSync", "runMany", "stream", "runStream"]);
        let tail = &out[out.find("const braidPackage").unwrap()..];
        assert_eq!(
            tail,
            "const braidPackage = braidApi({
    Workflow: {
        view: braidViews(Workflow),
        make: () => (__wbg_call_guard(), wasm.workflow_new() >>> 0),
        resume: (state) => (__wbg_call_guard(), braidTaken(wasm.workflow_resume(state))),
        free: (ptr) => (__wbg_call_guard(), wasm.__wbg_workflow_free(ptr, 1)),
        finished: () => (__wbg_call_guard(), wasm.__braid_finished() >>> 0),
        kept: () => (__wbg_call_guard(), wasm.__braid_kept() >>> 0),
    },
    Stream: {
        view: braidViews(Stream),
        make: () => (__wbg_call_guard(), braidTaken(wasm.workflow_stream())),
        free: (ptr) => (__wbg_call_guard(), wasm.__wbg_stream_free(ptr, 1)),
    },
    run: Workflow.run,
    runSync: Workflow.runSync,
    runMany: Workflow.runMany,
    runStream: Workflow.runStream,
    instance: () => __wbg_instance_id,
    runTyped: { kinds: 'bs', call: ((entry) => (items) => entry(braidPassBytes(items[0], 0), braidLengths[0], items[1]))(Workflow.__braid_run_typed_bs) },
    nextTyped: { kinds: 'b', call: ((entry) => (items) => entry(braidPassBytes(items[0], 0), braidLengths[0]))(Workflow.__braid_next_fresh_typed_b) },
    items: braidItems, takeSlow: braidTakeSlow, fits: braidFits,
});
Stream.__wrap = braidPackage.adoptStream;
const { Workflow: braid_Workflow, Stream: braid_Stream, run: braid_run, runSync: braid_runSync, runMany: braid_runMany, stream: braid_stream, runStream: braid_runStream } = braidPackage;
export { braid_Workflow as Workflow, braid_Stream as Stream, braid_run as run, braid_runSync as runSync, braid_runMany as runMany, braid_stream as stream, braid_runStream as runStream };
"
        );

        // CommonJS (a Node package), a bundler package's single instance
        // and no call guard, a workflow that neither streams nor has typed
        // entries.
        let node = "class Workflow {\n    constructor() {\n        const ret = wasm.workflow_new();\n        this.__wbg_ptr = ret;\n    }\n    next(inputs) {\n        wasm.workflow_next(this.__wbg_ptr, inputs);\n    }\n    free() {\n        wasm.__wbg_workflow_free(ptr, 0);\n    }\n\
            static resume(state) {\n        const ret = wasm.workflow_resume(state);\n        if (ret[2]) {\n            throw takeFromExternrefTable0(ret[1]);\n        }\n        return Workflow.__wrap(ret[0]);\n    }\n\
            static run(inputs) {\n    }\n    static runSync(inputs) {\n    }\n    static runMany(list) {\n    }\n}\n";
        let Api { glue: out, exports } = api(node, &TypedEntries::default(), false).unwrap().unwrap();
        assert_eq!(exports, ["Workflow", "run", "runSync", "runMany"]);
        let tail = &out[out.find("function braidViews").unwrap()..];
        assert!(tail.contains("        __wbg_inst = 0;\n"), "{tail}");
        assert!(tail.contains("        make: () => (wasm.workflow_new() >>> 0),\n"), "{tail}");
        assert!(tail.contains("    instance: () => 0,\n});\n"), "{tail}");
        assert!(
            !tail.contains("Stream")
                && !tail.contains("runTyped")
                && !tail.contains("items:")
                && !tail.contains("kept:"),
            "{tail}"
        );
        assert!(tail.ends_with("const { Workflow: braid_Workflow, run: braid_run, runSync: braid_runSync, runMany: braid_runMany } = braidPackage;\nexports.Workflow = braid_Workflow;\nexports.run = braid_run;\nexports.runSync = braid_runSync;\nexports.runMany = braid_runMany;\n"), "{tail}");

        // What the API calls of the glue in another form: refused, naming it.
        assert_eq!(
            api(&GLUE.replace("wasm.workflow_new()", "wasm.workflow_make()"), &typed, true),
            Err(CLASS_CALLS[0].1)
        );
        let freed_otherwise = GLUE.replace("wasm.__wbg_stream_free(", "wasm.stream_free(");
        assert_eq!(api(&freed_otherwise, &typed, true), Err(CLASS_CALLS[4].1));
        let stream_error = GLUE.replace(
            "wasm.workflow_stream();\n        if (ret[2]) {\n            throw takeFromExternrefTable0",
            "wasm.workflow_stream();\n        if (ret[2]) {\n            throw (",
        );
        assert_eq!(api(&stream_error, &typed, true), Err(CLASS_CALLS[5].1));

        // An operation's glue, or a bundler package's entry: left alone.
        assert_eq!(api("export function execute(input) {\n}\n", &TypedEntries::default(), true), Ok(None));
        assert_eq!(api("import { __wbg_set_wasm } from \"./wf_bg.js\";\n", &TypedEntries::default(), true), Ok(None));
    }
}
