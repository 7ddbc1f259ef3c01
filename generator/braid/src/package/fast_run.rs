//! The fast path of `run`, `runSync` and `next` in wasm-bindgen's JS glue:
//! the inputs read once in JS and, when each is a `Uint8Array` or a string
//! with room in Wasm memory, given to the typed entry the template makes,
//! with no call back into JS; anything else given to the general path as
//! read.

use super::braid_exports::{drop_unused_wrappers, hide_braid_exports};
use super::glue::top;
use super::traps::RESET;

/// How the glue declares the typed entry of `run` that the template makes
/// when every external input is a `Bytes` or a `String`, its name ending in
/// their kinds (`__braid_run_typed_bs`).
const TYPED_RUN: &str = "function __braid_run_typed_";

/// How the glue declares the typed entry of a new `Workflow`'s first
/// `next` (see [`made_later`]), made when one segment takes every external
/// input, each a `Bytes` or a `String`.
const TYPED_FRESH: &str = "function __braid_next_fresh_typed_";

/// `next`'s general call, its object's pointer checked by its brand (see
/// `glue::guard_freed_objects`, which runs first).
const NEXT_CALL: &str = "const braidPtr = braidBrandWorkflow.enter(this);\n";

/// `run`, `runSync` and `next` read their inputs through calls from Wasm
/// into JS, each hostile-safe (the Array, its length, each item, the bytes
/// located with the intrinsic getters): about 0.15 us of a call at 64 B.
/// When the template made typed entries (see [`TYPED_RUN`] and
/// [`TYPED_FRESH`]), they read their inputs here instead, in JS, once: an
/// Array of exactly the inputs, each of its kind (a `Uint8Array`, a string)
/// and within the limits, with room for them in Wasm memory (`__braid_room`,
/// as wasm-bindgen's allocator traps when it fails), goes to the typed
/// entry, which wasm-bindgen gives the bytes (copied by `braidPassBytes`)
/// and the text. Anything else goes the general way, unchanged, reading
/// what was read here (`braidReplay`): a getter or a `Proxy` trap of the
/// caller's runs once, and every error is the one the general path gives.
///
/// The `__braid_` functions are taken out of the module's exports, and
/// those nothing names out of the glue. `Ok` with the glue unchanged but
/// for that when it has no typed entry; `Err` saying what is missing when
/// it has one but the glue is not in the form edited here, or the package
/// has no braid-support snippet.
pub(super) fn fast_run(glue: &str, support: Option<&Support>) -> Result<String, &'static str> {
    let mut out = hide_braid_exports(glue);
    let mut edited = false;
    if let Some(kinds) = typed_entry(&mut out, TYPED_RUN)? {
        let (fit, typed) = (fits(&kinds), format!("__braid_run_typed_{kinds}({})", arguments(&kinds)));
        let sync = format!("if ({fit}) return {typed};");
        // What `runSync` would throw, `run` rejects with.
        let promise = format!(
            "try {{ if ({fit}) return Promise.resolve({typed}); }} catch (error) {{ return Promise.reject(error); }}"
        );
        insert_prelude(&mut out, "wasm.runSync(inputs);\n", &kinds, "", &sync, "")?;
        insert_prelude(&mut out, "wasm.run(inputs);\n", &kinds, "", &promise, "")?;
        edited = true;
    }
    if let Some(kinds) = typed_entry(&mut out, TYPED_FRESH)? {
        made_later(&mut out)?;
        // The object is refused before the inputs are read, as by the
        // general call, and checked again after them (a getter may have
        // freed it), before anything is copied into Wasm memory: from
        // there on, no code of the caller's runs. A new `Workflow` (no
        // Wasm object yet) runs its first `next` in one call
        // (`braidNextFresh`), whose step is made a Promise here; any other
        // goes the general way, without asking whether the inputs fit.
        // That the getter freed it, or what the typed call throws (a trap
        // that reset the module), rejects, as `next` does; the general call
        // is given the object checked again the same way.
        let check = "braidBrandWorkflow.check(this);";
        let typed = format!(
            "try {{ if (braidBrandWorkflow.fresh(this) && {}) return Promise.resolve(braidNextFresh(this, {})); }} \
             catch (error) {{ return Promise.reject(error); }}",
            fits(&kinds),
            arguments(&kinds),
        );
        let again = "try { braidBrandWorkflow.pointer(this); } catch (error) { return Promise.reject(error); }";
        insert_prelude(&mut out, NEXT_CALL, &kinds, check, &typed, again)?;
        edited = true;
    }
    if edited {
        let support = support.ok_or("braid-support's src/wasm.js among the package's snippets")?;
        out.insert_str(top(&out), &format!("{}{FAST_RUN_HELPERS}", support.binding()));
        // A reset lets go of the old instance's memory.
        if let Some(at) = out.find(RESET) {
            out.insert_str(at + RESET.len(), "    braidTargets.length = 0;\n");
        }
    }
    drop_unused_wrappers(&mut out);
    Ok(out)
}

/// Where the package has braid-support's `src/wasm.js`, whose functions
/// the fast path reads and copies callers' bytes with (`braidLengthOf`,
/// `braidCopyInto`), as every Braid package does: the path wasm-bindgen
/// put it at (`./snippets/braid-support-<hash>/src/wasm.js`), and whether
/// the glue is an ES module (else CommonJS, whose `require`s of snippets
/// are then replaced by the snippets themselves: `glue::inline_snippets`).
pub(super) struct Support {
    pub path: String,
    pub module: bool,
}

impl Support {
    /// The glue's `braidSupport`, the snippet's exports.
    fn binding(&self) -> String {
        let path = &self.path;
        if self.module {
            format!("import * as braidSupport from \"{path}\";\n")
        } else {
            format!("const braidSupport = require(\"{path}\");\n")
        }
    }
}

/// The kinds of the typed entry declared by `declaration` (`bs`), if the
/// glue has one, its `Uint8Array`s then copied in by `braidPassBytes`.
fn typed_entry(glue: &mut String, declaration: &str) -> Result<Option<String>, &'static str> {
    let Some(at) = glue.find(declaration) else {
        return Ok(None);
    };
    let rest = &glue[at + declaration.len()..];
    let kinds = rest[..rest.find('(').ok_or("the typed entry's parameters")?].to_string();
    if kinds.is_empty() || !kinds.bytes().all(|k| k == b'b' || k == b's') {
        return Err("the typed entry's name");
    }
    let indent = &declaration[..declaration.len() - declaration.trim_start().len()];
    let end = at + glue[at..].find(&format!("\n{indent}}}\n")).ok_or("the end of the typed entry")?;
    let mut entry = glue[at..end].to_string();
    for (i, _) in kinds.bytes().enumerate().filter(|(_, kind)| *kind == b'b') {
        let pass = format!("passArray8ToWasm0(input{i}, wasm.__wbindgen_malloc)");
        entry = Some(entry.replacen(&pass, &format!("braidPassBytes(input{i}, {i})"), 1))
            .filter(|e| *e != entry)
            .ok_or("how the typed entry passes bytes")?;
    }
    glue.replace_range(at..end, &entry);
    Ok(Some(kinds))
}

/// A `Workflow` made with no Wasm object, made when first needed: most are
/// made for one `next` (`await new Workflow().next(inputs)`), which, when
/// one segment takes every input, finishes the workflow. Such an object
/// then never has a FinalizationRegistry entry, whose cost (the collector
/// keeps each registered object to a full collection) was most of `next`'s
/// over `run`. The constructor only brands the object
/// (`braidBrandWorkflow.later`); its first `next`, on inputs of the typed
/// entry, is one call (`braidNextFresh`), whose workflow lives in Wasm for
/// that call alone if it succeeds, and is adopted otherwise (a failure
/// leaves it where `next` does); any other use of it makes
/// its Wasm object for good (`braidMakeWorkflow`): a new one or, after a
/// `next` that finished, a finished one (`__braid_finished`), so that every
/// method answers as it does for an object made at once.
fn made_later(glue: &mut String) -> Result<(), &'static str> {
    const FORM: &str = "the constructor of Workflow";
    let class = glue.find("class Workflow {").ok_or(FORM)?;
    let start = class + glue[class..].find("    constructor() {\n").ok_or(FORM)? + "    constructor() {\n".len();
    let end = start + glue[start..].find("        return this;\n").ok_or(FORM)?;
    let body = &glue[start..end];
    let guard = body.contains("__wbg_call_guard();");
    let register =
        body.lines().map(str::trim).find(|l| l.starts_with("WorkflowFinalization.register(this, ")).ok_or(FORM)?;
    let held = register
        .strip_prefix("WorkflowFinalization.register(this, braidBrandWorkflow.adopt(this, ret, ")
        .and_then(|rest| rest.strip_suffix("));"))
        .ok_or(FORM)?
        .to_string();
    let lines: Vec<&str> = body.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let expected: &[&str] = if guard {
        &["let ret;", "__wbg_call_guard();", "ret = wasm.workflow_new();", register]
    } else {
        &["const ret = wasm.workflow_new();", register]
    };
    if lines != expected {
        return Err(FORM);
    }
    let guard = if guard { "__wbg_call_guard();\n" } else { "" };
    glue.replace_range(start..end, &format!("{}        braidBrandWorkflow.later(this);\n", indented(guard, 8)));
    let brand = "const braidBrandWorkflow = braidBrand('Workflow');\n";
    let at = glue.find(brand).ok_or("the brand of Workflow")?;
    glue.replace_range(
        at..at + brand.len(),
        &format!(
            "const braidBrandWorkflow = braidBrand('Workflow', (object, later) => {{\n\
             {guard}    braidMakeWorkflow(object, later === 1 ? wasm.workflow_new() : wasm.__braid_finished());\n}});\n\
             function braidMakeWorkflow(object, ret) {{\n    \
             WorkflowFinalization.register(object, braidBrandWorkflow.made(object, ret, {held}));\n}}\n\
             function braidAdoptKept(object) {{\n    \
             const ptr = wasm.__braid_kept();\n    \
             if (ptr !== 0) braidMakeWorkflow(object, ptr);\n}}\n\
             ",
            guard = indented(guard, 4),
        ),
    );
    // The typed entry of a new object's first `next` (see the template's
    // `next_fresh_typed`): the workflow made in Wasm for the call, one
    // crossing, its step given back as is (the caller makes the Promise).
    // The object is finished when the step is and adopts the workflow
    // Wasm kept when the call failed (done or not: an output JS refused
    // comes after the last segment) or, were that possible, left it
    // waiting.
    let start = glue.find(TYPED_FRESH).ok_or("the typed first next")?;
    let end = start + glue[start..].find("\n}\n").ok_or("the typed first next")? + "\n}\n".len();
    let name_end = start + glue[start..].find('(').ok_or("the typed first next")? + 1;
    let give = "    if (ret[2]) {\n        throw takeFromExternrefTable0(ret[1]);\n    }\n    \
                return takeFromExternrefTable0(ret[0]);\n";
    let typed = &glue[name_end..end];
    if typed.matches(give).count() != 1 {
        return Err("the typed first next");
    }
    let fresh = typed.replacen(
        give,
        "    if (ret[2]) {\n        \
         const error = takeFromExternrefTable0(ret[1]);\n        \
         braidAdoptKept(object);\n        \
         throw error;\n    \
         }\n    \
         const step = takeFromExternrefTable0(ret[0]);\n    \
         if (step.done) {\n        \
         braidBrandWorkflow.finished(object);\n    \
         } else {\n        \
         braidAdoptKept(object);\n    \
         }\n    \
         return step;\n",
        1,
    );
    glue.replace_range(start..end, &format!("function braidNextFresh(object, {fresh}"));
    Ok(())
}

/// `line` (empty, or ending in a newline) indented by `by` spaces.
fn indented(line: &str, by: usize) -> String {
    if line.is_empty() {
        String::new()
    } else {
        format!("{}{line}", " ".repeat(by))
    }
}

/// Whether the inputs read are of `kinds`, with room in Wasm memory.
fn fits(kinds: &str) -> String {
    format!("braidFits(braidInputs, '{kinds}')")
}

/// `braidInputs[0], braidInputs[1], ...`, one for each of `kinds`.
fn arguments(kinds: &str) -> String {
    (0..kinds.len()).map(|i| format!("braidInputs[{i}]")).collect::<Vec<_>>().join(", ")
}

/// Puts the fast path before the line of the general `call`: `check`, then
/// the inputs read once, as many as `kinds` has, and `fast` (which returns
/// when it takes the typed entry) once they are; then `again`.
fn insert_prelude(
    glue: &mut String,
    call: &str,
    kinds: &str,
    check: &str,
    fast: &str,
    again: &str,
) -> Result<(), &'static str> {
    let at = glue.find(call).ok_or("the general call of run, runSync or next")?;
    let line = glue[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = glue[line..].len() - glue[line..].trim_start().len();
    let indent = " ".repeat(indent);
    let line_of = |text: &str| if text.is_empty() { String::new() } else { format!("{indent}{text}\n") };
    let (check, again) = (line_of(check), line_of(again));
    let fast: String = fast.lines().map(|line| format!("{indent}    {line}\n")).collect();
    let prelude = format!(
        "{check}{indent}const braidInputs = braidItems(inputs, {count});\n\
         {indent}if (braidInputs === undefined) {{\n\
         {indent}    inputs = braidTakeSlow();\n\
         {indent}}} else {{\n\
         {fast}\
         {indent}    inputs = braidInputs;\n\
         {indent}}}\n\
         {again}",
        count = kinds.len(),
    );
    glue.insert_str(line, &prelude);
    Ok(())
}

/// The JS side of [`fast_run`], put at the glue's top: Braid's own
/// JavaScript, `glue/fast-run.js`.
pub(super) const FAST_RUN_HELPERS: &str = include_str!("glue/fast-run.js");

#[cfg(test)]
mod tests {
    use super::*;

    fn support(module: bool) -> Support {
        Support { path: "./snippets/braid-support-0/src/wasm.js".into(), module }
    }

    /// A Node package's glue through [`fast_run`].
    fn fast_run_cjs(glue: &str) -> Result<String, &'static str> {
        fast_run(glue, Some(&support(false)))
    }

    /// `run`, `runSync` and a typed entry as wasm-bindgen 0.2.130 writes them
    /// for a Node package, a workflow taking a `Bytes` and a `String`.
    const TYPED: &str = "function __braid_room(bytes) {
    const ret = wasm.__braid_room(bytes);
    return ret !== 0;
}
exports.__braid_room = __braid_room;

function __braid_run_typed_bs(input0, input1) {
    const ptr0 = passArray8ToWasm0(input0, wasm.__wbindgen_malloc);
    const len0 = WASM_VECTOR_LEN;
    const ptr1 = passStringToWasm0(input1, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
    const len1 = WASM_VECTOR_LEN;
    let ret;
    __wbg_call_guard();
    ret = wasm.__braid_run_typed_bs(ptr0, len0, ptr1, len1);
    return takeFromExternrefTable0(ret[0]);
}
exports.__braid_run_typed_bs = __braid_run_typed_bs;

function run(inputs) {
    let ret;
    __wbg_call_guard();
    ret = wasm.run(inputs);
    return takeFromExternrefTable0(ret[0]);
}
exports.run = run;

function runSync(inputs) {
    let ret;
    __wbg_call_guard();
    ret = wasm.runSync(inputs);
    return takeFromExternrefTable0(ret[0]);
}
exports.runSync = runSync;
";

    #[test]
    fn run_and_run_sync_take_a_typed_fast_path() {
        let glue = format!("/* @ts-self-types=\"./wf.d.ts\" */\n{TYPED}");
        let fast = fast_run_cjs(&glue).unwrap();
        for expected in [
            "    const ptr0 = braidPassBytes(input0, 0);\n",
            // Strings are wasm-bindgen's to copy.
            "    const ptr1 = passStringToWasm0(input1, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);\n",
            "    __wbg_call_guard();\n    const braidInputs = braidItems(inputs, 2);\n    if (braidInputs === undefined) {\n        inputs = braidTakeSlow();\n    } else {\n        if (braidFits(braidInputs, 'bs')) return __braid_run_typed_bs(braidInputs[0], braidInputs[1]);\n        inputs = braidInputs;\n    }\n    ret = wasm.runSync(inputs);\n",
            "    } else {\n        try { if (braidFits(braidInputs, 'bs')) return Promise.resolve(__braid_run_typed_bs(braidInputs[0], braidInputs[1])); } catch (error) { return Promise.reject(error); }\n        inputs = braidInputs;\n    }\n    ret = wasm.run(inputs);\n",
            "exports.run = run;\n",
            "exports.runSync = runSync;\n",
        ] {
            assert!(fast.contains(expected), "{expected:?} in {fast}");
        }
        // Helpers first (they run as the module loads); the typed entry and
        // the room check are the glue's alone.
        assert!(
            fast.starts_with(
                "/* @ts-self-types=\"./wf.d.ts\" */\nconst braidSupport = require(\"./snippets/braid-support-0/src/wasm.js\");\n// Added by Braid"
            ),
            "{fast}"
        );
        // Without braid-support's snippet, no fast path.
        assert!(fast_run(&glue, None).is_err());
        assert!(!fast.contains("exports.__braid_"), "{fast}");
        // wasm-bindgen's function of `__braid_room`, which nothing calls, is
        // gone; the typed entry, which the fast path calls, stays.
        assert!(!fast.contains("function __braid_room") && fast.contains("wasm.__braid_room(bytes)"), "{fast}");
        assert!(fast.contains("\nfunction __braid_run_typed_bs(input0, input1) {\n"), "{fast}");

        // An ES module's, and a bundler's list of what it re-exports.
        let web = TYPED.replace("exports.", "// ").replace("\nfunction ", "\nexport function ");
        let fast = fast_run(&format!("\n{web}"), Some(&support(true))).unwrap();
        assert!(
            fast.starts_with(
                "import * as braidSupport from \"./snippets/braid-support-0/src/wasm.js\";\n// Added by Braid"
            ),
            "{fast}"
        );
        assert!(
            !fast.contains("export function __braid_") && fast.contains("\nexport function runSync(inputs) {"),
            "{fast}"
        );
        let list = "export {\n    Workflow, __braid_room, __braid_run_typed_b, run, runSync\n} from \"./wf_bg.js\";\n";
        assert_eq!(fast_run_cjs(list).unwrap(), "export {\n    Workflow, run, runSync\n} from \"./wf_bg.js\";\n");
        let lines =
            "export {\n    Workflow, __braid_room,\n    __braid_run_typed_b,\n    run\n} from \"./wf_bg.js\";\n";
        assert_eq!(fast_run_cjs(lines).unwrap(), "export {\n    Workflow,\n    \n    run\n} from \"./wf_bg.js\";\n");
        let one = "export { Workflow, __braid_room, run } from \"./wf_bg.js\";\n";
        assert_eq!(fast_run_cjs(one).unwrap(), "export { Workflow, run } from \"./wf_bg.js\";\n");

        // Without a typed entry the glue is left as it is; with one, `run`
        // and `runSync` must be in the form edited here.
        let plain = TYPED.replace("__braid_run_typed_bs", "other");
        let room =
            "function __braid_room(bytes) {\n    const ret = wasm.__braid_room(bytes);\n    return ret !== 0;\n}\n";
        assert_eq!(
            fast_run_cjs(&plain).unwrap(),
            plain.replace(&format!("{room}exports.__braid_room = __braid_room;\n"), "")
        );
        assert!(fast_run_cjs(&TYPED.replace("wasm.run(inputs);", "wasm.run(inputs, 1);")).is_err());
        assert!(fast_run_cjs(&TYPED.replace("passArray8ToWasm0(input0", "passArray8ToWasm1(input0")).is_err());
        assert!(fast_run_cjs(&TYPED.replace("typed_bs(", "typed_bx(")).is_err());
    }

    /// `next` of a class as `glue::guard_freed_objects` leaves it, with the
    /// typed entry of a new object's first `next`, for a segment taking one
    /// `Bytes`, as wasm-bindgen 0.2.130 writes it for a Node package.
    const TYPED_NEXT_CLASS: &str = "class Workflow {
    constructor() {
        const ret = wasm.workflow_new();
        WorkflowFinalization.register(this, braidBrandWorkflow.adopt(this, ret, ret));
        return this;
    }
    next(inputs) {
        let ret;
        const braidPtr = braidBrandWorkflow.enter(this);
        try {
            ret = wasm.workflow_next(braidPtr, inputs);
        } finally {
            braidBrandWorkflow.leave(this);
        }
        return takeFromExternrefTable0(ret[0]);
    }
}
const braidBrandWorkflow = braidBrand('Workflow');
function __braid_next_fresh_typed_b(input0) {
    const ptr0 = passArray8ToWasm0(input0, wasm.__wbindgen_malloc);
    const len0 = WASM_VECTOR_LEN;
    let ret;
    __wbg_call_guard();
    ret = wasm.__braid_next_fresh_typed_b(ptr0, len0);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return takeFromExternrefTable0(ret[0]);
}
exports.__braid_next_fresh_typed_b = __braid_next_fresh_typed_b;
";

    #[test]
    fn next_takes_the_typed_fast_path_too() {
        let fast = fast_run_cjs(TYPED_NEXT_CLASS).unwrap();
        for expected in [
            // The object checked first, as the general call does before it reads.
            "    next(inputs) {\n        let ret;\n        braidBrandWorkflow.check(this);\n        const braidInputs = braidItems(inputs, 1);\n",
            // A new object's first `next` is one call; any other goes the general way.
            "        } else {\n            \
             try { if (braidBrandWorkflow.fresh(this) && braidFits(braidInputs, 'b')) \
             return Promise.resolve(braidNextFresh(this, braidInputs[0])); } \
             catch (error) { return Promise.reject(error); }\n            inputs = braidInputs;\n        }\n",
            // Freed by a getter of the inputs: rejected, not thrown.
            "        }\n        try { braidBrandWorkflow.pointer(this); } catch (error) { return Promise.reject(error); }\n        const braidPtr = braidBrandWorkflow.enter(this);\n",
            // A new object has no Wasm object until it is used...
            "    constructor() {\n        braidBrandWorkflow.later(this);\n        return this;\n    }\n",
            "const braidBrandWorkflow = braidBrand('Workflow', (object, later) => {\n    braidMakeWorkflow(object, later === 1 ? wasm.workflow_new() : wasm.__braid_finished());\n});\n",
            "function braidMakeWorkflow(object, ret) {\n    WorkflowFinalization.register(object, braidBrandWorkflow.made(object, ret, ret));\n}\n",
            "function braidAdoptKept(object) {\n    const ptr = wasm.__braid_kept();\n    if (ptr !== 0) braidMakeWorkflow(object, ptr);\n}\n",
            // ...and its first `next` is one call, whose workflow the object
            // adopts only if it did not finish.
            "function braidNextFresh(object, input0) {\n    const ptr0 = braidPassBytes(input0, 0);\n    const len0 = WASM_VECTOR_LEN;\n    let ret;\n    __wbg_call_guard();\n    ret = wasm.__braid_next_fresh_typed_b(ptr0, len0);\n",
            "    if (ret[2]) {\n        const error = takeFromExternrefTable0(ret[1]);\n        braidAdoptKept(object);\n        throw error;\n    }\n    const step = takeFromExternrefTable0(ret[0]);\n    if (step.done) {\n        braidBrandWorkflow.finished(object);\n    } else {\n        braidAdoptKept(object);\n    }\n    return step;\n}\n",
        ] {
            assert!(fast.contains(expected), "{expected:?} in {fast}");
        }
        assert!(fast.starts_with("const braidSupport = require("), "{fast}");
        assert!(!fast.contains("__braid_next_fresh_typed_b(input0") && !fast.contains("exports.__braid_"), "{fast}");
        // Without the brand (the guards did not run), or the general call, it is refused.
        assert!(fast_run_cjs(&TYPED_NEXT_CLASS.replace("const braidBrandWorkflow = braidBrand('Workflow');\n", ""))
            .is_err());
        assert!(fast_run_cjs(
            &TYPED_NEXT_CLASS.replace("const braidPtr = braidBrandWorkflow.enter(this);", "const braidPtr = 0;")
        )
        .is_err());
        // Nor with the typed entry in another form.
        let give = "    return takeFromExternrefTable0(ret[0]);\n}\nexports";
        assert!(fast_run_cjs(&TYPED_NEXT_CLASS.replace(give, "    return ret;\n}\nexports")).is_err());
        assert!(
            fast_run_cjs(&TYPED_NEXT_CLASS.replace("passArray8ToWasm0(input0", "passArray8ToWasm1(input0")).is_err()
        );
        // Nor with a constructor that does more than make the Wasm object.
        assert!(fast_run_cjs(
            &TYPED_NEXT_CLASS.replace("        return this;\n", "        this.x = 1;\n        return this;\n")
        )
        .is_err());
    }
}
