// Added by Braid (its package/glue/objects.js, put at the top of the glue
// by package/glue.rs's `guard_freed_objects`, which points the glue's
// classes at it): each object the glue makes carries its class's brand, a
// private field holding its pointer, which no caller can read, set, copy
// or forge. A method refuses, before Wasm, an object without it, freed, or
// of another instance, and called on something else
// (`stream().finish.call(null)`) it throws here too; `free()` frees a live
// pointer of this instance, once.
//
// From the glue: `__wbg_instance_id`, the current instance's id (a
// bundler package, which has one instance, gets a constant 0 after this).
// Unit-tested as JavaScript by js/test/glue.test.mjs.
/* global __wbg_instance_id */
/* exported braidBrand, braidFinalizationRegistry, braidObject */
class BraidStamp {
    constructor(object) {
        return object;
    }
}
function braidBrand(name, make) {
    return class extends BraidStamp {
        #record;
        constructor(object, record) {
            super(object);
            this.#record = record;
        }
        static adopt(object, ptr, held) {
            const record = { ptr, instance: __wbg_instance_id, held, busy: false, later: 0 };
            new this(object, record);
            return record;
        }
        // An object whose Wasm object is made when first needed, by `make`:
        // `later` is 1 for a new one, 2 for one that finished without it.
        static later(object) {
            new this(object, { ptr: 0, instance: __wbg_instance_id, held: undefined, busy: false, later: 1 });
        }
        static made(object, ptr, held) {
            const record = object.#record;
            record.ptr = ptr;
            record.held = held;
            record.instance = __wbg_instance_id;
            record.later = 0;
            return record;
        }
        static finished(object) {
            object.#record.later = 2;
        }
        static check(object) {
            if (!(#record in braidObject(object))) throw new Error(`this object is not a ${name} this package made`);
            const record = object.#record;
            if (record.ptr === 0 && record.later === 0) throw new Error('this object was freed (free() was called)');
            if (record.instance !== __wbg_instance_id) throw new Error('Invalid stale object from previous Wasm instance');
            if (record.busy) throw new Error(`this ${name} is busy: code run by one of its own calls (a getter of its inputs) cannot use it until that call returns`);
            return record;
        }
        static fresh(object) {
            return this.check(object).later === 1;
        }
        static pointer(object) {
            const record = this.check(object);
            if (record.later !== 0) make(object, record.later);
            return record.ptr;
        }
        static enter(object) {
            const ptr = this.pointer(object);
            object.#record.busy = true;
            return ptr;
        }
        static leave(object) {
            object.#record.busy = false;
        }
        static take(object) {
            if (object === null || (typeof object !== 'object' && typeof object !== 'function') || !(#record in object)) return 0;
            const record = object.#record;
            const { ptr } = record;
            record.ptr = 0;
            record.later = 0;
            return record.instance === __wbg_instance_id ? ptr : 0;
        }
    };
}
function braidFinalizationRegistry(free) {
    return new FinalizationRegistry((record) => {
        if (record.ptr === 0) return;
        record.ptr = 0;
        free(record.held);
    });
}
function braidObject(object) {
    if (object === null || (typeof object !== 'object' && typeof object !== 'function')) {
        throw new Error(`this method was called on ${object === null ? 'null' : typeof object}, not on an object the package made`);
    }
    return object;
}
