// Hostile arguments for the generated packages' JS API, and a checker that
// runs them: the same module runs in Node (js/test/hostile.test.mjs) and in
// Chromium (js/test/browser.test.mjs), so it imports nothing and reports
// problems as strings instead of asserting.
//
// Every hostile call must throw (sync APIs) or reject (Promise APIs) a plain
// JS `Error` whose message says where and what was expected, never a
// `WebAssembly.RuntimeError` or an exception of the caller's own; a value
// that only lies (a Uint8Array subclass with a false `length`) is read for
// what it really is. Afterwards the same instance and module still give the
// right answer.

/** A Uint8Array whose buffer was transferred away (as by postMessage). */
export function detached(n = 16) {
  const bytes = new Uint8Array(n);
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
  return bytes;
}

/** A revoked Proxy (of an Array by default): any operation on it throws. */
export function revoked(target = []) {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

/** An Array whose element 0 is a getter that throws. */
export function throwingIndex(items) {
  const list = [...items];
  Object.defineProperty(list, 0, {
    get() {
      throw new TypeError('index getter says no');
    },
  });
  return list;
}

/** A Proxy of an Array whose `length` throws. */
export function throwingLength(items) {
  return new Proxy([...items], {
    get(target, key, receiver) {
      if (key === 'length') throw new RangeError('length getter says no');
      return Reflect.get(target, key, receiver);
    },
  });
}

/** A Proxy of an Array claiming `length` items, every one of them `item`. */
export function claimingLength(length, item) {
  return new Proxy([], {
    get(target, key, receiver) {
      if (key === 'length') return length;
      if (typeof key === 'string' && /^[0-9]+$/.test(key)) return item;
      return Reflect.get(target, key, receiver);
    },
  });
}

/** A Uint8Array subclass whose own getters claim 8 KiB more than it holds. */
export class LyingLength extends Uint8Array {
  get length() {
    return super.length + 8192;
  }
  get byteLength() {
    return super.byteLength + 8192;
  }
}

/** A Uint8Array subclass claiming 2^31 - 1 bytes. */
export class HugeLength extends Uint8Array {
  get length() {
    return 2 ** 31 - 1;
  }
  get byteLength() {
    return 2 ** 31 - 1;
  }
}

/** A Uint8Array subclass lying with every getter it has. */
export class LyingEverything extends Uint8Array {
  get length() {
    return 1 << 20;
  }
  get byteLength() {
    return 1 << 20;
  }
  get byteOffset() {
    return 0;
  }
  get buffer() {
    return new ArrayBuffer(1 << 20);
  }
}

/** A plain Uint8Array given an own `length` getter that claims 1 MiB. */
export function OwnLength(buffer) {
  const bytes = new Uint8Array(buffer);
  Object.defineProperty(bytes, 'length', { get: () => 1 << 20 });
  return bytes;
}

/** A plain `Error` made by the package (not a TypeError of the engine, not a trap). */
export const isPlainError = (e) => e instanceof Error && Object.getPrototypeOf(e) === Error.prototype;

const show = (v) => {
  if (v instanceof Error) return `${v.constructor.name}: ${v.message}`.slice(0, 300);
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  try {
    return String(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x))).slice(0, 300);
  } catch {
    return String(v);
  }
};

const same = (a, b) => {
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return a === b;
};

/**
 * What `call()` did: { value } or { error }, and whether it kept its
 * contract (a Promise API never throws synchronously, a sync API never
 * returns a Promise).
 */
async function outcome(call, isAsync) {
  let result;
  try {
    result = call();
  } catch (error) {
    return { error, broke: isAsync ? 'threw synchronously instead of rejecting' : undefined };
  }
  if (!isAsync) return { value: result, broke: result instanceof Promise ? 'returned a Promise' : undefined };
  if (!(result instanceof Promise)) return { value: result, broke: 'did not return a Promise' };
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ error: new Error('never settled'), broke: 'never settled (30 s)' }), 30_000);
  });
  try {
    return await Promise.race([result.then((value) => ({ value })), late]);
  } catch (error) {
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A subject: { label, calls: { name: { fn, async, output?, errorsOnly? } }, cases: [{ name, args, message | output }], good }
 * - `calls[name].fn(...args)` calls the package; `output(result)` extracts
 *   the output (a Step's `output` for `next`); a call `errorsOnly` is not
 *   given the cases that succeed;
 * - `cases[i].args()` makes fresh arguments; a case expects either an Error
 *   whose message matches `message`, or exactly `output`;
 * - `good = { args, output }` is a correct call.
 * Returns the problems found (empty when every call behaved).
 */
export async function check(subject, { rounds = 1 } = {}) {
  const problems = [];
  const calls = Object.entries(subject.calls);
  for (let round = 0; round < rounds; round++) {
    for (const c of subject.cases) {
      for (const [name, call] of calls) {
        if (call.errorsOnly && c.output !== undefined) continue;
        const what = `${subject.label} ${name}(${c.name})`;
        const r = await outcome(() => call.fn(...c.args()), call.async);
        if (r.broke) problems.push(`${what}: ${r.broke}`);
        if (c.output !== undefined) {
          const value = r.error ? undefined : (call.output ?? ((x) => x))(r.value);
          if (r.error) problems.push(`${what}: threw ${show(r.error)}; expected ${show(c.output)}`);
          else if (!same(value, c.output)) problems.push(`${what}: returned ${show(value)}; expected ${show(c.output)}`);
        } else if (!r.error) {
          problems.push(`${what}: did not fail (returned ${show(r.value)})`);
        } else if (!isPlainError(r.error) || !c.message.test(r.error.message)) {
          problems.push(`${what}: ${show(r.error)} is not an Error matching ${c.message}`);
        }
        if (problems.length > 20) return problems;
      }
    }
  }
  return problems.concat(await correct(subject, 'afterwards'));
}

/** `count` hostile calls, cycling through the cases and calls, then correct ones. */
export async function storm(subject, count = 5000) {
  const problems = [];
  const calls = Object.entries(subject.calls);
  let notErrors = 0;
  for (let i = 0; i < count; i++) {
    const c = subject.cases[i % subject.cases.length];
    const [name, call] = calls[Math.floor(i / subject.cases.length) % calls.length];
    if (call.errorsOnly && c.output !== undefined) continue;
    const r = await outcome(() => call.fn(...c.args()), call.async);
    if (r.error && !isPlainError(r.error) && notErrors++ < 3) {
      problems.push(`${subject.label} call ${i}, ${name}(${c.name}): ${show(r.error)}`);
    }
  }
  if (notErrors > 3) problems.push(`${subject.label}: ${notErrors} hostile calls in all gave something other than a plain Error`);
  return problems.concat(await correct(subject, `after ${count} hostile calls`));
}

/** Each call once with the good arguments: the right answer, on the same instance. */
async function correct(subject, when) {
  const problems = [];
  for (const [name, call] of Object.entries(subject.calls)) {
    const r = await outcome(() => call.fn(...subject.good.args()), call.async);
    const value = r.error ? undefined : (call.output ?? ((x) => x))(r.value);
    if (r.error || !same(value, subject.good.output)) {
      problems.push(`${subject.label} ${name}, ${when}: ${r.error ? `threw ${show(r.error)}` : `returned ${show(value)}`}; expected ${show(subject.good.output)}`);
    }
  }
  return problems;
}

/** Deterministic bytes. */
const pattern = (n, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** A previous caller's data, about the size a lying `length` asks for. */
const SECRET = Uint8Array.from({ length: 8192 + 4 }, (_, i) => 'SECRET-previous-caller-data-'.charCodeAt(i % 28));

/**
 * Cases for one value read as a Uint8Array, put into a call's arguments by
 * `wrap`. `output(bytes)` is the package's answer for plain `bytes`;
 * `before()` runs just before a lying value is read (to leave another
 * caller's data in the module's memory).
 */
export function bytesCases(wrap, output, before = () => {}) {
  const real = pattern(4);
  const liar = (Class) => () => {
    before();
    return wrap(new Class(real.slice().buffer));
  };
  return [
    { name: 'detached Uint8Array', args: () => wrap(detached()), message: /: expected Uint8Array[^,]*, found a Uint8Array whose ArrayBuffer is detached/ },
    { name: 'revoked Proxy', args: () => wrap(revoked(new Uint8Array(4))), message: /: expected Uint8Array[^,]*, found a revoked Proxy/ },
    { name: 'Proxy of a Uint8Array', args: () => wrap(new Proxy(new Uint8Array(4), {})), message: /: expected Uint8Array[^,]*, found a Proxy or other object that is not a real Uint8Array/ },
    { name: 'Uint8Array whose length claims 8 KiB more', args: liar(LyingLength), output: output(real) },
    { name: 'Uint8Array whose length claims 2^31-1', args: liar(HugeLength), output: output(real) },
    { name: 'Uint8Array lying with every getter', args: liar(LyingEverything), output: output(real) },
    { name: 'Uint8Array with an own length getter', args: liar(OwnLength), output: output(real) },
  ];
}

/**
 * Cases for a value read as an Array, put into the arguments by `wrap`;
 * its items are Uint8Arrays (then each bytes case applies to item 0) or,
 * with `anyItems`, any value.
 */
export function listCases(wrap, output, { before, anyItems = false } = {}) {
  const good = [pattern(3), pattern(5, 9)];
  const item = anyItems ? 'any value' : 'Uint8Array';
  return [
    { name: 'revoked Proxy as the list', args: () => wrap(revoked()), message: /: expected Array[^,]*, found a revoked Proxy/ },
    { name: 'list with a throwing index getter', args: () => wrap(throwingIndex(good)), message: new RegExp(`\\[0\\]: expected ${item}, found a value that threw while being read: TypeError: index getter says no`) },
    { name: 'list with a throwing length', args: () => wrap(throwingLength(good)), message: /: expected Array[^,]*, found a value that threw while being read: RangeError: length getter says no/ },
    { name: 'list claiming 2^31-1 items', args: () => wrap(claimingLength(2 ** 31 - 1, good[0])), message: /: expected Array of at most 1048576 items, found an Array of 2147483647 items/ },
    { name: 'new Array(2**28)', args: () => wrap(new Array(2 ** 28)), message: /: expected Array of at most 1048576 items, found an Array of 268435456 items/ },
    ...(anyItems ? [] : bytesCases((v) => wrap([v]), (bytes) => output([bytes]), before)),
  ];
}

/** Cases for the positional inputs Array of a workflow taking `good` (one input). */
export function inputsCases(good) {
  return [
    { name: 'revoked Proxy as the inputs', args: () => [revoked()], message: /inputs: expected an Array of inputs, found a revoked Proxy/ },
    { name: 'inputs with a throwing index getter', args: () => [throwingIndex([good])], message: /input 0: expected [^,]*, found a value that threw while being read: TypeError: index getter says no/ },
    { name: 'inputs with a throwing length', args: () => [throwingLength([good])], message: /inputs: expected an Array of inputs, found a value that threw while being read: RangeError: length getter says no/ },
    { name: 'inputs claiming 2^31-1 items', args: () => [claimingLength(2 ** 31 - 1, good)], message: /inputs: expected 1 input\(s\), found 2147483647/ },
    { name: 'new Array(2**28) as the inputs', args: () => [new Array(2 ** 28)], message: /inputs: expected 1 input\(s\), found 268435456/ },
  ];
}

/** A workflow package: `run`, `runSync`, `new Workflow().next` and `next` of one instance. */
export function workflowSubject(mod, label, cases, good) {
  const wf = new mod.Workflow();
  const output = (step) => step.output;
  return {
    label,
    cases,
    good,
    calls: {
      run: { fn: (inputs) => mod.run(inputs), async: true },
      runSync: { fn: (inputs) => mod.runSync(inputs), async: false },
      'new Workflow().next': { fn: (inputs) => new mod.Workflow().next(inputs), async: true, output },
      runMany: { fn: (inputs) => mod.runMany([inputs]), async: true, output: (outputs) => outputs[0] },
      // Only hostile calls that fail: the good call at the end finishes it.
      'wf.next (one instance)': { fn: (inputs) => wf.next(inputs), async: true, output, errorsOnly: true },
    },
  };
}

/** A workflow's `stream()`: a fresh stream fed the one chunk, then finished. */
export function streamSubject(mod, label, cases, good) {
  const once = (chunk) => {
    const stream = mod.stream();
    try {
      stream.update(chunk);
      return stream.finish();
    } finally {
      stream.free();
    }
  };
  return { label, cases, good, calls: { 'stream().update': { fn: once, async: false } } };
}

/** An operation package: `execute` and `executeSync`. */
export function operationSubject(mod, label, cases, good) {
  return {
    label,
    cases,
    good,
    calls: {
      execute: { fn: (...args) => mod.execute(...args), async: true },
      executeSync: { fn: (...args) => mod.executeSync(...args), async: false },
    },
  };
}

/**
 * Every subject, given the loaded packages: { cid: wf_cidv1_from_bytes,
 * concatHex: wf_concat_hex, opMultihash, opConcat, opCollect }. Each call
 * makes fresh instances (a subject's `wf.next` instance ends done).
 */
export function subjects({ cid, concatHex, opMultihash, opConcat, opCollect }) {
  const bytes = pattern(1000);
  const list = [pattern(3), pattern(5, 9)];
  const cidOf = (b) => cid.runSync([b]);
  const hexOf = (l) => concatHex.runSync([l]);
  const leaveSecret = () => hexOf([SECRET]);
  const mhOf = (b) => opMultihash.executeSync(b, { hasher: 'sha2-256' });
  const secretMh = () => mhOf(SECRET);
  const badConfig = [
    { name: 'config with a throwing getter', args: () => [bytes, { get hasher() { throw new Error('config getter says no'); } }], message: /op_multihash config: expected [^,]*, found a value that threw while being read: Error: config getter says no/ },
    { name: 'revoked Proxy as the config', args: () => [bytes, revoked({})], message: /op_multihash config: expected [^,]*, found a revoked Proxy/ },
  ];
  return [
    workflowSubject(cid, 'cidv1_from_bytes', [...inputsCases(bytes), ...bytesCases((v) => [[v]], cidOf)], { args: () => [[bytes]], output: cidOf(bytes) }),
    streamSubject(cid, 'cidv1_from_bytes stream', bytesCases((v) => [v], cidOf), { args: () => [bytes], output: cidOf(bytes) }),
    workflowSubject(concatHex, 'concat_hex', [...inputsCases(list), ...listCases((l) => [[l]], hexOf, { before: leaveSecret })], { args: () => [[list]], output: hexOf(list) }),
    operationSubject(opMultihash, 'op_multihash', [...bytesCases((v) => [v, { hasher: 'sha2-256' }], mhOf, secretMh), ...badConfig], { args: () => [bytes, { hasher: 'sha2-256' }], output: mhOf(bytes) }),
    operationSubject(opConcat, 'op_concat', listCases((l) => [l], (l) => opConcat.executeSync(l)), { args: () => [list], output: opConcat.executeSync(list) }),
    operationSubject(opCollect, 'op_collect', listCases((l) => [l], (l) => opCollect.executeSync(l), { anyItems: true }), { args: () => [list], output: opCollect.executeSync(list) }),
  ];
}

/**
 * `count` calls of each method of a freed Workflow of `mod` (each must throw
 * or reject a plain Error) and of `free()` (each doing nothing), then correct
 * calls of the module: returns the problems found.
 */
export async function freedCalls(mod, good, count = 10000) {
  const problems = [];
  const dead = new mod.Workflow();
  dead.free();
  const methods = { next: () => dead.next(...good.args()), done: () => dead.done, suspend: () => dead.suspend() };
  for (const [name, call] of Object.entries(methods)) {
    for (let i = 0; i < count; i++) {
      // Thrown at once, by the glue, even by `next`.
      let r;
      try {
        const value = call();
        r = value instanceof Promise ? await value.then((v) => ({ value: v }), (error) => ({ error })) : { value };
      } catch (error) {
        r = { error };
      }
      if (!r.error || !isPlainError(r.error)) {
        problems.push(`freed Workflow: ${name}() call ${i}: ${r.error ? show(r.error) : `returned ${show(r.value)}`}`);
        break;
      }
    }
  }
  // free() again does nothing, however often.
  for (let i = 0; i < count; i++) {
    try {
      dead.free();
    } catch (error) {
      problems.push(`freed Workflow: free() call ${i} threw ${show(error)}`);
      break;
    }
  }
  return problems.concat(await correct(workflowSubject(mod, 'after the freed Workflow', [], good), `after ${count} calls of each method of a freed Workflow`));
}

/**
 * Objects the package did not make, or not of the class, as a method's
 * `this`: an object of the class's prototype given a live Workflow's
 * pointer (and its instance), copies of a live Workflow (its own
 * properties, symbols included, or inheriting from it), a Proxy of one, a
 * stream as a Workflow, an object whose own `__destroy_into_raw` names a
 * pointer; and no `__wrap` to make an object of a pointer. Each method
 * refuses them with a plain Error, `free()` frees nothing, and the real
 * Workflow and stream go on as if nothing happened. `mod` has `stream()`.
 */
export async function forgedObjects(mod, good) {
  const problems = [];
  const real = new mod.Workflow();
  const stream = mod.stream();
  const forged = Object.create(mod.Workflow.prototype);
  forged.__wbg_ptr = real.__wbg_ptr;
  forged.__wbg_inst = real.__wbg_inst;
  const { next, free } = mod.Workflow.prototype;
  const done = Object.getOwnPropertyDescriptor(mod.Workflow.prototype, 'done').get;
  const refused = async (what, call) => {
    try {
      const value = await call();
      problems.push(`${what}: returned ${show(value)}`);
    } catch (error) {
      if (!isPlainError(error)) problems.push(`${what}: ${show(error)}`);
    }
  };
  const nothing = (what, call) => {
    try {
      call();
    } catch (error) {
      problems.push(`${what}: threw ${show(error)}`);
    }
  };
  const copies = {
    'a copy of a Workflow': Object.assign(Object.create(mod.Workflow.prototype), real),
    'a spread of a Workflow': Object.setPrototypeOf({ ...real }, mod.Workflow.prototype),
    'an object inheriting from a Workflow': Object.create(real),
    'a Proxy of a Workflow': new Proxy(real, {}),
  };
  for (const [what, copy] of Object.entries(copies)) {
    await refused(`next() of ${what}`, () => next.call(copy, ...good.args()));
    nothing(`free() of ${what}`, () => free.call(copy));
  }
  for (const Class of [mod.Workflow, mod.Stream]) {
    if (typeof Class.__wrap !== 'undefined') problems.push(`${Class.name}.__wrap is there: any caller could make an object of any pointer`);
  }
  await refused('next() of a forged Workflow', () => forged.next(...good.args()));
  await refused('done of a forged Workflow', () => forged.done);
  await refused('next() of a stream', () => next.call(stream, ...good.args()));
  await refused('done of a stream', () => done.call(stream));
  nothing('free() of a forged Workflow', () => forged.free());
  nothing('free() of a stream as a Workflow', () => free.call(stream));
  nothing('free() of an object naming a pointer', () => free.call({ __destroy_into_raw: () => real.__wbg_ptr }));
  try {
    if (real.done) problems.push('the real Workflow is done before it ran');
    const step = await real.next(...good.args());
    if (!step.done || show(step.output) !== show(good.output)) problems.push(`the real Workflow after the forged calls: ${show(step)}`);
    stream.update(good.args()[0][0]);
    const output = stream.finish();
    if (show(output) !== show(good.output)) problems.push(`the stream after the forged calls: ${show(output)}`);
  } catch (error) {
    problems.push(`the real objects after the forged calls: ${show(error)}`);
  }
  real.free();
  return problems.concat(await correct(workflowSubject(mod, 'after forged objects', [], good), 'after forged objects'));
}

/**
 * The inputs Array is read once: each of its keys, through a Proxy's `get`
 * trap or an index getter, is read at most once by a call of `run`,
 * `runSync` or `next`, whether the inputs are right (the answer is given)
 * or not (an Error); and the typed entries they call are not reachable.
 * `good` is a correct call of one input.
 */
export async function readsOnce(mod, good) {
  const problems = [];
  // The typed entries these take for inputs they checked are the glue's alone.
  for (const name of [...Object.keys(mod), ...Object.getOwnPropertyNames(mod.Workflow.prototype)]) {
    if (name.startsWith('__braid_')) problems.push(`${name} is reachable: it takes inputs nobody checked`);
  }
  const [input] = good.args()[0];
  const counted = (items, length = items.length) => {
    const reads = new Map();
    const proxy = new Proxy(items, {
      get(target, key, receiver) {
        if (typeof key === 'string') reads.set(key, (reads.get(key) ?? 0) + 1);
        return key === 'length' ? length : Reflect.get(target, key, receiver);
      },
    });
    return { proxy, reads };
  };
  const getter = () => {
    const reads = new Map([['0', 0]]);
    const list = [];
    Object.defineProperty(list, 0, { get: () => (reads.set('0', reads.get('0') + 1), input), enumerable: true });
    return { proxy: list, reads };
  };
  const calls = {
    run: (inputs) => mod.run(inputs),
    runSync: (inputs) => mod.runSync(inputs),
    'new Workflow().next': (inputs) => new mod.Workflow().next(inputs).then((step) => step.output),
  };
  const cases = {
    'a Proxy of the right inputs': () => counted([input]),
    'an index getter giving the right input': getter,
    'a Proxy of an input of the wrong kind': () => counted([42]),
    'a Proxy of a Proxy of the input': () => counted([new Proxy(input, {})]),
    'a Proxy claiming one input more': () => counted([input], 2),
  };
  for (const [name, call] of Object.entries(calls)) {
    for (const [what, make] of Object.entries(cases)) {
      const { proxy, reads } = make();
      let value;
      try {
        value = await call(proxy);
      } catch (error) {
        if (!isPlainError(error)) problems.push(`${name}(${what}): ${show(error)}`);
      }
      if (value !== undefined && show(value) !== show(good.output)) problems.push(`${name}(${what}): returned ${show(value)}`);
      for (const [key, count] of reads) {
        if (count > 1) problems.push(`${name}(${what}): read ${key} ${count} times`);
      }
    }
  }
  return problems;
}

/**
 * A getter of the inputs that frees the Workflow being called: `next`
 * refuses the freed object with a plain Error and copies nothing into Wasm
 * memory for it. 72 such calls with 64 MiB each would fill the 4 GiB of
 * Wasm memory if each left its copy behind: afterwards a `runSync` of 64
 * MiB still has room, and the module answers right.
 */
export async function freedWhileRead(mod, good) {
  const problems = [];
  const big = new Uint8Array(64 << 20);
  for (let i = 0; i < 72; i++) {
    const wf = new mod.Workflow();
    const inputs = [];
    Object.defineProperty(inputs, 0, { get: () => (wf.free(), big) });
    try {
      await wf.next(inputs);
      problems.push('next of a Workflow freed by its input getter gave an answer');
      break;
    } catch (error) {
      if (!isPlainError(error)) {
        problems.push(`next of a Workflow freed by its input getter: ${show(error)}`);
        break;
      }
    }
  }
  try {
    mod.runSync([big]);
  } catch (error) {
    problems.push(`runSync of 64 MiB afterwards: ${show(error)}`);
  }
  const step = await new mod.Workflow().next(...good.args());
  if (show(step.output) !== show(good.output)) problems.push(`next afterwards: ${show(step)}`);
  return problems;
}

/**
 * A call that runs the caller's code (a Proxy's `getPrototypeOf` trap, read
 * as the error message of an input of the wrong kind is made) which frees
 * the object being called, or resets the module: the call ends with a plain
 * Error, the freed object is refused afterwards (it is freed when the call
 * returns), a reset asked for during a call fails that call and then
 * happens, and the module answers right. 200 rounds, to catch memory freed
 * and still used. `mod` has `stream()`; `good` is a correct call of one
 * input.
 */
export async function calledBack(mod, good) {
  const problems = [];
  const running = (during) => new Proxy({}, { getPrototypeOf: () => (during(), Object.prototype) });
  const settle = async (call) => {
    try {
      return { value: await call() };
    } catch (error) {
      return { error };
    }
  };
  const expect = (what, r, message) => {
    if (r.error && isPlainError(r.error) && message.test(r.error.message)) return true;
    problems.push(`${what}: ${r.error ? show(r.error) : `returned ${show(r.value)}`}; expected an Error matching ${message}`);
    return false;
  };
  const wrongKind = /expected Uint8Array, found an object/;
  for (let i = 0; i < 200; i++) {
    const wf = new mod.Workflow();
    if (!expect('next whose input frees its Workflow', await settle(() => wf.next([running(() => wf.free())])), wrongKind)) break;
    if (!expect('next of that Workflow afterwards', await settle(() => wf.next(...good.args())), /was freed/)) break;
    const stream = mod.stream();
    if (!expect('update whose chunk frees its stream', await settle(() => stream.update(running(() => stream.free()))), wrongKind)) break;
    if (!expect('finish of that stream afterwards', await settle(() => stream.finish()), /was freed/)) break;
  }
  // Its own methods, called by the caller's code a call of it runs, are
  // refused with a plain Error (the object is busy), and nothing is reset.
  const before = new mod.Workflow();
  for (const [what, use] of [['reads done', (wf) => wf.done], ['calls suspend()', (wf) => wf.suspend()], ['calls next()', (wf) => wf.next(...good.args())]]) {
    const wf = new mod.Workflow();
    const inner = [];
    const outer = await settle(() => wf.next([running(() => { try { inner.push({ value: use(wf) }); } catch (error) { inner.push({ error }); } })]));
    expect(`next whose input ${what} of its Workflow`, outer, wrongKind);
    if (inner.length !== 1 || !inner[0].error || !isPlainError(inner[0].error) || !/is busy/.test(inner[0].error.message)) {
      problems.push(`a getter of next's input that ${what} of its Workflow: ${inner.map((r) => (r.error ? show(r.error) : `returned ${show(r.value)}`)).join('; ')}`);
    }
  }
  const busyStream = mod.stream();
  let finished;
  expect('update whose chunk finishes its stream', await settle(() => busyStream.update(running(() => { try { busyStream.finish(); } catch (error) { finished = error; } }))), wrongKind);
  if (!isPlainError(finished) || !/is busy/.test(finished.message)) problems.push(`finish() of a stream during its update: ${show(finished)}`);
  const stepBefore = await settle(() => before.next(...good.args()));
  if (stepBefore.error || show(stepBefore.value.output) !== show(good.output)) problems.push(`a Workflow made before the busy objects' calls: ${show(stepBefore.error ?? stepBefore.value)}`);
  // A Promise API rejects, never throws, when the caller's code frees the
  // object while its inputs are read.
  for (const [what, wrong] of [['the input', false], ['an input of the wrong kind', true]]) {
    const wf = new mod.Workflow();
    const inputs = [];
    Object.defineProperty(inputs, 0, { get: () => (wf.free(), wrong ? 42 : good.args()[0][0]) });
    let pending;
    try {
      pending = wf.next(inputs);
    } catch (error) {
      problems.push(`next whose index getter giving ${what} frees its Workflow threw synchronously: ${show(error)}`);
      continue;
    }
    expect(`next whose index getter giving ${what} frees its Workflow`, await settle(() => pending), /was freed/);
  }
  // The glue sets and reads no property of its objects that the caller can
  // make a setter or a getter (a subclass's, or the class's own prototype's),
  // which could reset the module between the Wasm call that made an object
  // and its brand, and give it another instance's memory.
  const props = ['__wbg_ptr', '__wbg_inst'];
  let ran = 0;
  const trap = { configurable: true, get: () => (ran++, undefined), set: () => (ran++, mod.__wbg_reset_state?.()) };
  const StreamPrototype = Object.getPrototypeOf(mod.stream());
  class Sub extends mod.Workflow {}
  for (const prototype of [Sub.prototype, mod.Workflow.prototype, StreamPrototype]) for (const p of props) Object.defineProperty(prototype, p, trap);
  try {
    const sub = new Sub();
    const victim = new mod.Workflow();
    const stream = mod.stream();
    await sub.next(...good.args());
    if (victim.done) problems.push('a Workflow made after a subclass ran is done: they share memory');
    stream.update(good.args()[0][0]);
    const step = await victim.next(...good.args());
    if (show(step.output) !== show(good.output)) problems.push(`the Workflow made after the subclass: ${show(step)}`);
    if (show(stream.finish()) !== show(good.output)) problems.push('the stream made with setters on its prototype gave a wrong answer');
    mod.Workflow.prototype.free.call(sub);
    sub.free();
  } catch (error) {
    problems.push(`objects with setters and getters on their prototypes: ${show(error)}`);
  } finally {
    for (const prototype of [Sub.prototype, mod.Workflow.prototype, StreamPrototype]) for (const p of props) delete prototype[p];
  }
  if (ran !== 0) problems.push(`the glue ran ${ran} setters or getters of its objects' prototypes`);
  if (typeof mod.__wbg_reset_state === 'function') {
    const asked = /was asked to reset \(__wbg_reset_state\(\)\) during this call/;
    const reset = () => mod.__wbg_reset_state();
    for (let i = 0; i < 20; i++) {
      const before = new mod.Workflow();
      expect('runSync whose input resets the module', await settle(() => mod.runSync([running(reset)])), asked);
      expect('next whose input resets the module', await settle(() => new mod.Workflow().next([running(reset)])), asked);
      expect('a Workflow made before the reset', await settle(() => before.next(...good.args())), /stale object/);
    }
  }
  return problems.concat(await correct(workflowSubject(mod, 'after the calls that freed or reset', [], good), 'afterwards'));
}

/**
 * Views of the module's own Wasm memory (`memory`, of the raw exports a web
 * package's `init()` gives) as inputs: the copy grows the memory, which
 * detaches them. Each call gives a plain Error saying so or an answer
 * (never a TypeError, a trap or a reset), and the module answers right.
 */
export async function ownMemory(mod, memory, good) {
  const problems = [];
  const calls = {
    runSync: (v) => mod.runSync([v]),
    run: (v) => mod.run([v]),
    next: (v) => new mod.Workflow().next([v]),
    runMany: (v) => mod.runMany([[v]]),
    'stream update': (v) => mod.stream().update(v),
  };
  for (let i = 0; i < 3; i++) {
    for (const [name, call] of Object.entries(calls)) {
      try {
        await call(new Uint8Array(memory.buffer));
      } catch (error) {
        // Refused as it is, or once the copy's room detached it.
        if (!isPlainError(error) || !/detached|own Wasm memory|than Wasm memory has room for/.test(error.message)) problems.push(`${name}(a view of all of Wasm memory): ${show(error)}`);
      }
    }
  }
  return problems.concat(await correct(workflowSubject(mod, 'after views of its own memory', [], good), 'afterwards'));
}
