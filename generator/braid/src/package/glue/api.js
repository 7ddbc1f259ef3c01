// Added by Braid (its package/glue/api.js, put at the end of a workflow
// package's glue by package/api.rs, which hands `braidApi` what it needs of
// the glue and exports what it returns): the package's API, Braid's own.
// wasm-bindgen's classes and functions (static methods of its `Workflow`)
// are declared in the glue and not exported.
//
// A `Workflow` or a `Stream` of this API owns its Wasm object by pointer,
// in a private field (`#cell`) which no caller reads, sets, copies or
// forges: it is not copied (`Object.assign`, spread), inherited
// (`Object.create`) or reached through a `Proxy`, and nothing reachable
// from the classes makes an object of a pointer. Its methods call
// wasm-bindgen's on a view of the pointer (the glue's `view`), which never
// leaves this file. A method refuses, in JS and before Wasm, an object this
// package did not make, one freed, one of an instance a trap reset, and one
// busy: while a method given a value of the caller's runs (`next`,
// `update`), the caller's code it runs (a getter of the inputs, a `Proxy`
// trap) cannot call the object's methods, which Rust would refuse by
// throwing through Wasm (the object is borrowed), resetting the module.
// `free()` frees a live object of this instance once; during the object's
// own call, when that call returns.
//
// A `Workflow` gets its Wasm object only when first used: most are made for
// one `next` (`await new Workflow().next(inputs)`), which, when one segment
// takes every input and they are of its typed entry's kinds, is one call
// (`nextTyped`) whose workflow lives in Wasm for that call alone if it
// finishes, and is adopted otherwise (`kept`). Such an object never has a
// FinalizationRegistry entry, whose cost (the collector keeps each
// registered object to a full collection) was most of `next`'s over `run`;
// the others' entries take no unregister token, which costs V8 a map entry
// per object.
// Any other use makes its Wasm object for good: a new one or, after a
// `next` that finished, a finished one (`finished`), so every method
// answers as it does for an object made at once.
//
// `run`, `runSync` and a new `Workflow`'s `next` read their inputs once
// (glue/fast-run.js's `braidItems`) and, when each is of the typed entry's
// kind with room in Wasm memory (`braidFits`), call it: no call back into
// JS. Anything else goes the general way, reading what was read here.
//
// Takes nothing from the glue's scope: `glue` is what package/api.rs hands
// over. Unit-tested as JavaScript by js/test/glue.test.mjs.
/* exported braidApi */

/**
 * The package's API over `glue`: for wasm-bindgen's `Workflow` and, where
 * the workflow streams, `Stream`, a `{ view, make, free }` each (a view of
 * a pointer: an object with wasm-bindgen's methods for it; a new Wasm
 * object's pointer; the pointer freed, or when a running call of it
 * returns), with `resume`, `finished` and `kept` (pointers) for
 * `Workflow`; `run`, `runSync`, `runMany` and where the workflow streams
 * `runStream`; `instance()`, the current instance's id; the typed entries
 * where the template made them: `runTyped` and `nextTyped` (`{ kinds, call
 * }`, `call(items)` calling the entry with the items read), and with them
 * `items`, `takeSlow` and `fits`, glue/fast-run.js's readers of the inputs.
 */
function braidApi(glue) {
    const { instance, items: readItems, takeSlow, fits, nextTyped } = glue;
    const { apply } = Reflect;
    const register = typeof FinalizationRegistry === 'undefined' ? undefined : FinalizationRegistry.prototype.register;
    const refuse = (what) => {
        throw new Error(what);
    };
    /** `object`, unless the method was called on something that is not one. */
    const objectOf = (object) => {
        if (object === null || (typeof object !== 'object' && typeof object !== 'function')) {
            refuse(`this method was called on ${object === null ? 'null' : typeof object}, not on an object the package made`);
        }
        return object;
    };
    /**
     * A class's FinalizationRegistry, of each object's `{ ptr, instance }`
     * (`ptr` 0 once freed) with no unregister token: `free()` empties the
     * record instead, and the finalizer skips an empty one.
     */
    const registry = (free) => {
        if (typeof FinalizationRegistry === 'undefined') return () => {};
        const entries = new FinalizationRegistry((held) => {
            if (held.ptr !== 0 && held.instance === instance()) free(held.ptr);
            held.ptr = 0;
        });
        // Called as it was when the package loaded: a `register` the
        // caller put on the prototype later is never handed a cell.
        return (cell, held) => apply(register, entries, [cell, held]);
    };

    /**
     * The state of one `Workflow` or `Stream`, in its private field `#cell`
     * (a cell is never handed to callers): its Wasm object (`held`, and
     * `view`, with wasm-bindgen's methods for it), whether it is to be made
     * (`later`: 1 new, 2 finished, 0 made or none), busy or freed.
     */
    class Cell {
        // Fields, defined on the cell: no setter of the caller's on a
        // prototype runs when they are set, or is handed the cell.
        of;
        held = undefined;
        view = undefined;
        instance = instance();
        busy = false;
        freed = false;
        later;

        constructor(of, later) {
            this.of = of;
            this.later = later;
        }

        /** This cell, checked: live, of this instance, not busy. */
        check() {
            if (this.freed) refuse('this object was freed (free() was called)');
            if (this.instance !== instance()) refuse('Invalid stale object from previous Wasm instance');
            if (this.busy) refuse(`this ${this.of.name} is busy: code run by one of its own calls (a getter of its inputs) cannot use it until that call returns`);
            return this;
        }

        /** The view of the checked cell's Wasm object, made now if it has none. */
        made() {
            this.check();
            if (this.later !== 0) this.adopt(this.later === 1 ? this.of.make() : this.of.finished());
            return this.view;
        }

        /** Takes the Wasm object of `ptr`, of the current instance. */
        adopt(ptr) {
            this.held = { ptr, instance: instance() };
            this.instance = this.held.instance;
            this.view = this.of.view(ptr);
            this.later = 0;
            this.of.register(this, this.held);
        }

        /** `call(view)` with the object busy; freed as it returns if it was meanwhile. */
        busyWith(call) {
            const view = this.made();
            this.busy = true;
            try {
                return call(view);
            } finally {
                this.busy = false;
                if (this.freed) this.release();
            }
        }

        /** `free()`: once; when the object's running call returns if it is busy. */
        free() {
            if (this.freed) return;
            this.freed = true;
            if (!this.busy) this.release();
        }

        release() {
            const { held } = this;
            this.held = undefined;
            this.view = undefined;
            this.later = 0;
            if (held === undefined || held.ptr === 0) return;
            const { ptr } = held;
            held.ptr = 0;
            // Of a reset instance: nothing of it in this one to free.
            if (held.instance === instance()) this.of.free(ptr);
        }
    }

    const workflows = { name: 'Workflow', ...glue.Workflow, register: registry(glue.Workflow.free) };

    class Workflow {
        #cell = new Cell(workflows, 1);

        /** The cell of a Workflow this package made, checked. */
        static #of(object) {
            if (!(#cell in objectOf(object))) refuse('this object is not a Workflow this package made');
            return object.#cell.check();
        }

        free() {
            objectOf(this);
            if (#cell in this) this.#cell.free();
        }

        get done() {
            return Workflow.#of(this).made().done;
        }

        next(inputs) {
            const cell = Workflow.#of(this);
            const typed = nextTyped;
            if (typed !== undefined) {
                const items = readItems(inputs, typed.kinds.length);
                if (items === undefined) {
                    inputs = takeSlow();
                } else {
                    // A getter of the inputs may have freed the object:
                    // checked again before anything is copied into Wasm
                    // memory, from where no code of the caller's runs.
                    try {
                        if (cell.check().later === 1 && fits(items, typed.kinds)) {
                            return Promise.resolve(Workflow.#nextFresh(cell, typed.call, items));
                        }
                    } catch (error) {
                        return Promise.reject(error);
                    }
                    inputs = items;
                }
            }
            try {
                cell.made();
            } catch (error) {
                return Promise.reject(error);
            }
            return cell.busyWith((view) => view.next(inputs));
        }

        /**
         * A new object's first `next`, one call into Wasm, which makes the
         * workflow there: adopted if the call failed or left it waiting,
         * else (it finished) freed with the call.
         */
        static #nextFresh(cell, call, items) {
            let step;
            try {
                step = call(items);
            } catch (error) {
                Workflow.#adoptKept(cell);
                throw error;
            }
            if (step.done) {
                cell.later = 2;
            } else {
                Workflow.#adoptKept(cell);
            }
            return step;
        }

        static #adoptKept(cell) {
            const ptr = workflows.kept();
            if (ptr !== 0) cell.adopt(ptr);
        }

        suspend() {
            return Workflow.#of(this).made().suspend();
        }

        static resume(state) {
            const ptr = workflows.resume(state);
            const workflow = new Workflow();
            workflow.#cell.adopt(ptr);
            return workflow;
        }
    }
    if (Symbol.dispose) Workflow.prototype[Symbol.dispose] = Workflow.prototype.free;

    const api = { Workflow, runMany: glue.runMany, run: glue.run, runSync: glue.runSync };

    if (glue.runTyped !== undefined) {
        const { kinds, call } = glue.runTyped;
        const { run: general, runSync: generalSync } = glue;
        api.runSync = function runSync(inputs) {
            const items = readItems(inputs, kinds.length);
            if (items === undefined) return generalSync(takeSlow());
            if (fits(items, kinds)) return call(items);
            return generalSync(items);
        };
        // What `runSync` would throw, `run` rejects with.
        api.run = function run(inputs) {
            const items = readItems(inputs, kinds.length);
            if (items === undefined) return general(takeSlow());
            try {
                if (fits(items, kinds)) return Promise.resolve(call(items));
            } catch (error) {
                return Promise.reject(error);
            }
            return general(items);
        };
    }

    if (glue.Stream !== undefined) {
        const streams = { name: 'Stream', ...glue.Stream, register: registry(glue.Stream.free) };
        // The pointer of the Wasm object `stream()` or Rust (`runStream`'s)
        // makes a Stream of: any other `new Stream()` has none.
        let making;

        class Stream {
            #cell = making === undefined ? undefined : new Cell(streams, 0);

            constructor() {
                if (making !== undefined) {
                    const ptr = making;
                    making = undefined;
                    this.#cell.adopt(ptr);
                }
            }

            /** The cell of a Stream this package made, checked. */
            static #of(object) {
                if (!(#cell in objectOf(object)) || object.#cell === undefined) refuse('this object is not a Stream this package made');
                return object.#cell.check();
            }

            free() {
                objectOf(this);
                if (#cell in this && this.#cell !== undefined) this.#cell.free();
            }

            update(chunk) {
                return Stream.#of(this).busyWith((view) => view.update(chunk));
            }

            finish() {
                return Stream.#of(this).made().finish();
            }
        }
        if (Symbol.dispose) Stream.prototype[Symbol.dispose] = Stream.prototype.free;
        api.Stream = Stream;
        const adopt = (ptr) => {
            making = ptr;
            try {
                return new Stream();
            } finally {
                making = undefined;
            }
        };
        api.stream = function stream() {
            return adopt(streams.make());
        };
        // For the glue alone (package/api.rs does not export it).
        api.adoptStream = adopt;
        api.runStream = glue.runStream;
    }
    return api;
}
