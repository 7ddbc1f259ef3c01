// The JS side of braid-support's Wasm boundary (src/wasm.rs): reads the
// arguments JS callers pass without running their code where that can be
// avoided, and says what a value is without throwing. Rust calls every
// function that may still throw through a `catch` import, so no exception
// unwinds through Rust frames.
//
// Bytes are read with the intrinsic %TypedArray%.prototype getters captured
// when this module loads, never with getters a caller could override (a
// Uint8Array subclass may lie about its `length`): `Symbol.toStringTag`
// tells a real Uint8Array (subclasses included) from anything else, Proxies
// included, and `buffer`, `byteOffset` and `byteLength` say where its bytes
// are. Written as `export function` declarations only: src/wasm.rs imports
// them from the glue's scope as the namespace `braidSupport`, which Braid
// makes of this file and binds at the top of every package's glue
// (generator/braid/src/package/glue.rs).

const TypedArray = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (object, key) => Object.getOwnPropertyDescriptor(object, key).get;
const tagOf = getter(TypedArray, Symbol.toStringTag);
const bufferOf = getter(TypedArray, 'buffer');
const offsetOf = getter(TypedArray, 'byteOffset');
const lengthOf = getter(TypedArray, 'byteLength');
const { includes, set } = TypedArray;
const { apply, getOwnPropertyDescriptor, getPrototypeOf } = Reflect;
const { isArray } = Array;
const { defineProperty, hasOwn, keys } = Object;
const Bytes = Uint8Array;
const none = Object.freeze([]);

/**
 * The bytes of a real Uint8Array (subclasses included), as a Uint8Array that
 * holds exactly them and whose `length` tells so; undefined for anything
 * else, or one whose buffer is detached. A plain Uint8Array without an own
 * `length` is returned as it is (no getter of the caller's can answer for
 * it); any other is copied into a fresh view.
 */
function bytesOf(value) {
  if (apply(tagOf, value, none) !== 'Uint8Array') return undefined;
  const length = apply(lengthOf, value, none);
  // A detached buffer's views have no bytes.
  if (length === 0 && isDetached(value)) return undefined;
  if (getPrototypeOf(value) === Bytes.prototype && !hasOwn(value, 'length')) return value;
  return new Bytes(apply(bufferOf, value, none), apply(offsetOf, value, none), length);
}

/** Whether a view's buffer is detached: `includes` throws then (and reads nothing of an empty view). */
function isDetached(view) {
  try {
    apply(includes, view, [0]);
    return false;
  } catch {
    return true;
  }
}

/** 1 for an Array (or a Proxy of one), 0 for anything else, -1 for a revoked Proxy. */
function arrayKind(value) {
  try {
    return isArray(value) ? 1 : 0;
  } catch {
    return -1;
  }
}

const clip = (s) => (s.length > 200 ? `${s.slice(0, 200)}...` : s);

// The bytes `braidByteLength` found (unless empty), for `braidCopyFound`
// right after it (nothing runs in between), or forgotten.
let found;

/** The byte length of a Uint8Array; -1 for anything else. */
export function braidByteLength(value) {
  const bytes = bytesOf(value);
  if (bytes === undefined) return -1;
  const length = apply(lengthOf, bytes, none);
  if (length > 0) found = bytes;
  return length;
}

/**
 * Copies `length` bytes of those `braidByteLength` found, from `start`, to
 * `ptr` in Wasm memory (`memory`, where Rust allocated them), forgetting
 * them if `forget`: false if they are no longer there (their buffer
 * detached, as a view of the module's own memory is when it grows).
 */
export function braidCopyFound(memory, ptr, start, length, forget) {
  const bytes = found;
  if (forget) found = undefined;
  return copyInto(new Bytes(memory.buffer, ptr, length), bytes, start, length);
}

/**
 * The byte length of a real Uint8Array (subclasses included, by the
 * intrinsic getters); -1 for anything else. Reads nothing of the caller's
 * and throws nothing. The typed fast path of a workflow's `run` (Braid's
 * fast-run.js, in the package's glue) asks this of each input.
 */
export function braidLengthOf(value) {
  return apply(tagOf, value, none) === 'Uint8Array' ? apply(lengthOf, value, none) : -1;
}

/**
 * Copies the first `length` bytes of a real Uint8Array that had exactly
 * `length` bytes when the caller made room for them into `target`, a view
 * of Wasm memory of exactly `length` bytes: false if they are no longer
 * there. The typed fast path copies its inputs with this: `set` at once,
 * and only if that throws (it grew) the way of [`copyInto`].
 */
export function braidCopyInto(target, bytes, length) {
  try {
    apply(set, target, [bytes]);
    return true;
  } catch {
    return copyInto(target, bytes, 0, length);
  }
}

/**
 * Copies `length` bytes of `bytes` from `start` into `target` (a view of
 * exactly `length` bytes): false if they are no longer there (detached, or
 * shorter than they were).
 *
 * A whole view is given to `set` as it is (asking for its buffer would
 * make V8 move a small one's bytes out of its heap, 0.3 us), which reads a
 * typed array's own slots, never a subclass's getters. A length-tracking
 * view of a growable SharedArrayBuffer may grow meanwhile (another
 * thread), and `set` then throws rather than write past `target`; its
 * first bytes are then copied from a view of a fixed length, as any piece
 * but a whole is.
 */
function copyInto(target, bytes, start, length) {
  try {
    if (start === 0 && apply(lengthOf, bytes, none) === length) {
      try {
        apply(set, target, [bytes]);
        return true;
      } catch {
        // It grew: the first `length` bytes, below.
      }
    }
    apply(set, target, [new Bytes(apply(bufferOf, bytes, none), apply(offsetOf, bytes, none) + start, length)]);
    return true;
  } catch {
    return false;
  }
}

/** Whether the bytes `braidByteLength` found are in `memory` (Wasm's), which growing detaches. */
export function braidFoundIn(memory) {
  return apply(bufferOf, found, none) === memory.buffer;
}

/** Forgets the bytes `braidByteLength` found. */
export function braidForgetBytes() {
  found = undefined;
}

// What a read left for Rust's error path (`braidTakeLeft`): the exception
// it threw, or the value that was not of the kind asked for. Reads that
// report through it catch their own exceptions, so Rust imports them
// without wasm-bindgen's `catch` wrapper (which costs every call).
let left;

/** What the last read that failed left (see `left`), once. */
export function braidTakeLeft() {
  const value = left;
  left = undefined;
  return value;
}

/**
 * The length of an Array (a Proxy's trap may run): -1 for anything else,
 * -2 if reading it threw (the exception left), NaN if it is not a
 * number or is negative.
 */
export function braidListLength(value) {
  if (arrayKind(value) !== 1) return -1;
  let length;
  try {
    length = value.length;
  } catch (e) {
    left = e;
    return -2;
  }
  return typeof length === 'number' && length >= 0 ? length : NaN;
}

/**
 * Item `index` of a list read as bytes, in one call: the byte length of a
 * Uint8Array (its bytes found, as `braidByteLength` finds them); -1 for
 * any other item (left), -2 if reading it threw (the exception left).
 */
export function braidItemBytes(list, index) {
  let item;
  try {
    item = list[index];
  } catch (e) {
    left = e;
    return -2;
  }
  const length = braidByteLength(item);
  if (length < 0) left = item;
  return length;
}

/** Item `index` of a list (a getter or a Proxy's trap may run). */
export function braidItem(list, index) {
  return list[index];
}

/** At most `max` own enumerable [key, value] pairs of an object, flat; undefined for an Array or a revoked Proxy. */
export function braidEntries(value, max) {
  if (arrayKind(value) !== 0) return undefined;
  const names = keys(value);
  const pairs = [];
  for (let i = 0; i < names.length && i < max; i++) pairs.push(names[i], value[names[i]]);
  return pairs;
}

/** Whether a value is a plain object: not null, an Array, a typed array, a function or a revoked Proxy. */
export function braidIsRecord(value) {
  return typeof value === 'object' && value !== null && arrayKind(value) === 0 && apply(tagOf, value, none) === undefined;
}

/** Field `key` of a record (a getter or a Proxy's trap may run). */
export function braidField(record, key) {
  return record[key];
}

/** A fresh object for a record or map that Wasm fills. */
export function braidRecordOut() {
  return {};
}

/** Defines `key` on a fresh object (an own data property: `__proto__` is a key like any other). */
export function braidSetField(record, key, value) {
  defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A workflow's step: one object literal, so every step has the same shape. */
export function braidStep(done, output, segmentTime, totalTime) {
  return { done, output, segmentTime, totalTime };
}

/** A copy of `bytes`, a view of Wasm memory (allocating it may throw). */
export function braidBytesOut(bytes) {
  return new Bytes(bytes);
}

/** The string wasm-bindgen decoded (decoding may throw: too long for the engine). */
export function braidStringOut(text) {
  return text;
}

/** What a value is, for an error message (`a string`, `an object of class Foo`); never throws. */
export function braidDescribe(value) {
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'bigint':
      return 'a bigint';
    case 'boolean':
      return 'a boolean';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
  }
  if (value === null) return 'null';
  const tag = apply(tagOf, value, none);
  if (tag === 'Uint8Array' && bytesOf(value) === undefined) return 'a Uint8Array whose ArrayBuffer is detached';
  if (tag !== undefined) return `${tag.startsWith('Int') ? 'an' : 'a'} ${tag}`; // a Uint8Array, an Int8Array
  const kind = arrayKind(value);
  if (kind !== 0) return kind === 1 ? 'an Array' : 'a revoked Proxy';
  try {
    const prototype = getPrototypeOf(value);
    const constructor = prototype === null ? undefined : getOwnPropertyDescriptor(prototype, 'constructor');
    const name = typeof constructor?.value === 'function' ? getOwnPropertyDescriptor(constructor.value, 'name') : undefined;
    const className = typeof name?.value === 'string' ? name.value : '';
    if (/^(Big)?(Uint|Int|Float)[0-9]+(Clamped)?Array$/.test(className)) return `a Proxy or other object that is not a real ${className}`;
    return className === '' || className === 'Object' ? 'an object' : `an object of class ${clip(className)}`;
  } catch (e) {
    return braidThrown('a value that threw while being read: ', e);
  }
}

/** `prefix` and an exception as text (at most about 200 characters); never throws. */
export function braidThrown(prefix, exception) {
  try {
    return prefix + clip(String(exception));
  } catch {
    return `${prefix}an exception that cannot be shown`;
  }
}
