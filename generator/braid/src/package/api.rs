//! A workflow package's API: Braid's own JavaScript (`glue/api.js`), whose
//! `Workflow` and `Stream` hold wasm-bindgen's objects where callers cannot
//! reach them, put at the end of the glue and exported in place of
//! wasm-bindgen's classes and functions, which it is handed by name.

use super::braid_exports::hide_exports;
use super::fast_run::TypedEntries;
use super::glue::declares;

/// What the package exports of Braid's API, in place of wasm-bindgen's
/// classes and functions of these names, when the glue has them.
const API: [&str; 7] = ["Workflow", "Stream", "run", "runSync", "runMany", "stream", "runStream"];

/// `glue/api.js`: Braid's own JavaScript, `braidApi`.
pub(super) const API_JS: &str = include_str!("glue/api.js");

/// What the API calls of wasm-bindgen's glue for a class's objects, which
/// it owns by pointer: the raw exports that make and free one, as the
/// glue's own code calls them (a `Stream`'s, a `Result` whose error is in
/// the externref table), and the class's `__destroy_into_raw`, which takes
/// the pointer of an object the glue made.
const CLASS_CALLS: [&str; 5] = [
    "wasm.workflow_new()",
    "wasm.__wbg_workflow_free(",
    "__destroy_into_raw() {",
    "wasm.__wbg_stream_free(",
    "wasm.stream();\n    if (ret[2]) {\n        throw takeFromExternrefTable0(ret[1]);\n    }\n    return Stream.__wrap(ret[0]);\n",
];

/// The glue of a workflow package (one with wasm-bindgen's `Workflow`)
/// with Braid's API in place of wasm-bindgen's: `glue/api.js`, then the
/// call of `braidApi` with what it needs of the glue (by pointer, its
/// classes' objects: see [`CLASS_CALLS`]; the typed entries', see
/// `fast_run.rs`), then its exports, as CommonJS's `exports.NAME` or, when
/// `module`, an ES module's `export`. `Ok(None)` for other glue (an
/// operation's, a bundler package's entry); `Err` naming what the API
/// needs that the glue does not have in the form called here.
pub(super) fn api(glue: &str, typed: &TypedEntries, module: bool) -> Result<Option<String>, &'static str> {
    if !declares(glue, "Workflow") {
        return Ok(None);
    }
    let present: Vec<&str> = API.into_iter().filter(|name| declares(glue, name)).collect();
    let streams = present.contains(&"Stream");
    for call in CLASS_CALLS.into_iter().filter(|call| streams || !call.contains("tream")) {
        if !glue.contains(call) {
            return Err(call);
        }
    }
    let mut out = hide_exports(glue, |name| present.contains(&name));
    // Each call of the glue's own exports runs its guard first, as its
    // functions do, where it has one (a Node or web package's).
    let guard = if declares(glue, "__wbg_call_guard") { "__wbg_call_guard(), " } else { "" };
    let mut workflow = vec![
        "view: (ptr) => braidView(Workflow, ptr)".to_string(),
        format!("make: () => ({guard}wasm.workflow_new() >>> 0)"),
        "resume: (state) => Workflow.resume(state).__destroy_into_raw()".into(),
        format!("free: (ptr) => ({guard}wasm.__wbg_workflow_free(ptr, 1))"),
    ];
    if typed.next.is_some() {
        workflow.push(format!("finished: () => ({guard}wasm.__braid_finished() >>> 0)"));
        workflow.push(format!("kept: () => ({guard}wasm.__braid_kept() >>> 0)"));
    }
    let mut given = vec![format!("Workflow: {{\n        {},\n    }}", workflow.join(",\n        "))];
    if streams {
        given.push(format!(
            "Stream: {{\n        view: (ptr) => braidView(Stream, ptr),\n        make: () => ({guard}braidTaken(wasm.stream())),\n        \
             free: (ptr) => ({guard}wasm.__wbg_stream_free(ptr, 1)),\n    }}"
        ));
    }
    given.extend(present.iter().filter(|name| !["Workflow", "Stream", "stream"].contains(name)).map(|n| n.to_string()));
    // A bundler package has one instance, whose id is 0.
    let instance = if declares(glue, "__wbg_instance_id") { "__wbg_instance_id" } else { "0" };
    given.push(format!("instance: () => {instance}"));
    // Each typed entry called with the items read as its arguments, one
    // by one rather than spread.
    let entry = |name: &str, kinds: &str| {
        let items: Vec<String> = (0..kinds.len()).map(|i| format!("items[{i}]")).collect();
        format!("{{ kinds: '{kinds}', call: (items) => {name}{kinds}({}) }}", items.join(", "))
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
         /** An object with the methods of wasm-bindgen's `Class` for the Wasm object at `ptr`. */\n\
         function braidView(Class, ptr) {{\n    \
         const view = Object.create(Class.prototype);\n    \
         view.__wbg_ptr = ptr;\n    \
         view.__wbg_inst = {instance};\n    \
         return view;\n}}\n\
         /** The pointer a raw export gave as a `Result`, or its error thrown. */\n\
         function braidTaken(ret) {{\n    \
         if (ret[2]) throw takeFromExternrefTable0(ret[1]);\n    \
         return ret[0] >>> 0;\n}}\n\
         const braidPackage = braidApi({{\n{}}});\n",
        given.iter().map(|line| format!("    {line},\n")).collect::<String>()
    ));
    if module {
        // Bound to names of their own: the glue declares wasm-bindgen's.
        let local = |name: &str| format!("braid_{name}");
        let locals: Vec<String> = present.iter().map(|name| format!("{name}: {}", local(name))).collect();
        let exports: Vec<String> = present.iter().map(|name| format!("{} as {name}", local(name))).collect();
        out.push_str(&format!(
            "const {{ {} }} = braidPackage;\nexport {{ {} }};\n",
            locals.join(", "),
            exports.join(", ")
        ));
    } else {
        for name in &present {
            out.push_str(&format!("exports.{name} = braidPackage.{name};\n"));
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wasm-bindgen 0.2.130's glue for a workflow that streams, as an ES
    /// module with a reset function (abridged: what `api` reads).
    const GLUE: &str = "let __wbg_instance_id = 0;\nfunction __wbg_call_guard() {\n}\nexport class Stream {\n    __destroy_into_raw() {\n    }\n    free() {\n        wasm.__wbg_stream_free(ptr, 0);\n    }\n}\n\
        export class Workflow {\n    __destroy_into_raw() {\n    }\n    constructor() {\n        ret = wasm.workflow_new();\n    }\n    free() {\n        wasm.__wbg_workflow_free(ptr, 0);\n    }\n}\n\
        export function run(inputs) {\n}\nexport function runSync(inputs) {\n}\nexport function runMany(list) {\n}\n\
        export function stream() {\n    let ret;\n    __wbg_call_guard();\n    ret = wasm.stream();\n    if (ret[2]) {\n        throw takeFromExternrefTable0(ret[1]);\n    }\n    return Stream.__wrap(ret[0]);\n}\n\
        export function runStream(source) {\n}\nexport function __wbg_reset_state () {\n}\n";

    #[test]
    fn braids_api_takes_the_place_of_wasm_bindgens() {
        let typed = TypedEntries { run: Some("bs".into()), next: Some("b".into()) };
        let out = api(GLUE, &typed, true).unwrap().unwrap();
        // wasm-bindgen's own are the glue's alone; what else it exports stays.
        assert!(!out.contains("export class") && !out.contains("export function run"), "{out}");
        assert!(out.contains("\nexport function __wbg_reset_state () {\n"), "{out}");
        assert!(out.contains(API_JS), "{out}");
        let tail = &out[out.find("const braidPackage").unwrap()..];
        assert_eq!(
            tail,
            "const braidPackage = braidApi({
    Workflow: {
        view: (ptr) => braidView(Workflow, ptr),
        make: () => (__wbg_call_guard(), wasm.workflow_new() >>> 0),
        resume: (state) => Workflow.resume(state).__destroy_into_raw(),
        free: (ptr) => (__wbg_call_guard(), wasm.__wbg_workflow_free(ptr, 1)),
        finished: () => (__wbg_call_guard(), wasm.__braid_finished() >>> 0),
        kept: () => (__wbg_call_guard(), wasm.__braid_kept() >>> 0),
    },
    Stream: {
        view: (ptr) => braidView(Stream, ptr),
        make: () => (__wbg_call_guard(), braidTaken(wasm.stream())),
        free: (ptr) => (__wbg_call_guard(), wasm.__wbg_stream_free(ptr, 1)),
    },
    run,
    runSync,
    runMany,
    runStream,
    instance: () => __wbg_instance_id,
    runTyped: { kinds: 'bs', call: (items) => __braid_run_typed_bs(items[0], items[1]) },
    nextTyped: { kinds: 'b', call: (items) => __braid_next_fresh_typed_b(items[0]) },
    items: braidItems, takeSlow: braidTakeSlow, fits: braidFits,
});
const { Workflow: braid_Workflow, Stream: braid_Stream, run: braid_run, runSync: braid_runSync, runMany: braid_runMany, stream: braid_stream, runStream: braid_runStream } = braidPackage;
export { braid_Workflow as Workflow, braid_Stream as Stream, braid_run as run, braid_runSync as runSync, braid_runMany as runMany, braid_stream as stream, braid_runStream as runStream };
"
        );

        // CommonJS (a Node package), a bundler package's single instance
        // and no call guard, a workflow that neither streams nor has typed
        // entries.
        let node = "class Workflow {\n    __destroy_into_raw() {\n    }\n    constructor() {\n        ret = wasm.workflow_new();\n    }\n    free() {\n        wasm.__wbg_workflow_free(ptr, 0);\n    }\n}\nexports.Workflow = Workflow;\n\
            function run(inputs) {\n}\nexports.run = run;\nfunction runSync(inputs) {\n}\nexports.runSync = runSync;\nfunction runMany(list) {\n}\nexports.runMany = runMany;\n";
        let out = api(node, &TypedEntries::default(), false).unwrap().unwrap();
        assert!(!out.contains("exports.Workflow = Workflow;") && !out.contains("exports.run = run;"), "{out}");
        let tail = &out[out.find("function braidView").unwrap()..];
        assert!(tail.contains("    view.__wbg_inst = 0;\n"), "{tail}");
        assert!(tail.contains("        make: () => (wasm.workflow_new() >>> 0),\n"), "{tail}");
        assert!(tail.contains("    instance: () => 0,\n});\n"), "{tail}");
        assert!(
            !tail.contains("Stream")
                && !tail.contains("runTyped")
                && !tail.contains("items:")
                && !tail.contains("kept:"),
            "{tail}"
        );
        assert!(tail.ends_with("exports.Workflow = braidPackage.Workflow;\nexports.run = braidPackage.run;\nexports.runSync = braidPackage.runSync;\nexports.runMany = braidPackage.runMany;\n"), "{tail}");

        // What the API calls of the glue in another form: refused, naming it.
        assert_eq!(
            api(&GLUE.replace("wasm.workflow_new()", "wasm.workflow_make()"), &typed, true),
            Err("wasm.workflow_new()")
        );
        assert!(api(&GLUE.replace("throw takeFromExternrefTable0(ret[1]);", "throw ret[1];"), &typed, true)
            .unwrap_err()
            .starts_with("wasm.stream();"));

        // An operation's glue, or a bundler package's entry: left alone.
        assert_eq!(api("export function execute(input) {\n}\n", &TypedEntries::default(), true), Ok(None));
        assert_eq!(
            api("export {\n    Workflow, run\n} from \"./wf_bg.js\";\n", &TypedEntries::default(), true),
            Ok(None)
        );
    }
}
