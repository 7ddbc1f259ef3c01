// The example workflows, built by `braid build` (make test-workflows): their
// Node packages and their native builds (`braid run`) against the vectors of
// the independent reference implementation; the JS API's errors; suspend in
// one process and resume in another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { cid, inputValue, workflowVectors } from '../lib/reference.mjs';
import { root, wfOut as out, braid, braidSync } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);
const committed = JSON.parse(readFileSync(`${root}/workflows/vectors.json`, 'utf8'));

const report = (name) => JSON.parse(readFileSync(`${out}/${name}/report.json`, 'utf8'));
const hasNode = (name) => report(name).targets.includes('node');
const load = (name) => require(`${out}/${name}/pkg/node/wf_${name}.js`);
const values = (c) => c.calls.map((call) => call.map((s) => inputValue(s, root)));

test('committed workflow vectors are what the reference implementation computes', () => {
  assert.deepEqual(committed, workflowVectors(root, (p) => readFileSync(p)));
});

test('every example workflow was built, with Node packages where its operations allow', () => {
  const names = readdirSync(`${root}/workflows`).filter((f) => f.endsWith('.json') && f !== 'vectors.json');
  assert.ok(names.length >= 5);
  for (const file of names) {
    const name = file.replace(/\.json$/, '');
    const r = report(name);
    assert.ok(r.targets.includes('native'), name);
    assert.equal(r.targets.includes('node'), name !== 'cid_of_file', `${name}: ${r.targets}`);
  }
});

test('Node packages give the reference outputs through next() and run()', async () => {
  for (const c of committed.cases.filter((c) => hasNode(c.workflow))) {
    const mod = load(c.workflow);
    const calls = values(c);
    const wf = new mod.Workflow();
    for (const [i, inputs] of calls.entries()) {
      const step = await wf.next(inputs);
      const last = i === calls.length - 1;
      assert.equal(step.done, last, `${c.workflow} call ${i}`);
      assert.equal(wf.done, last);
      if (last) assert.deepEqual(step.output, c.output, c.workflow);
      else assert.equal(step.output, undefined);
      assert.equal(typeof step.segmentTime, 'number');
      assert.ok(step.totalTime >= step.segmentTime);
    }
    assert.deepEqual(await mod.run(calls.flat()), c.output, `${c.workflow} run`);
    assert.deepEqual(mod.runSync(calls.flat()), c.output, `${c.workflow} runSync`);
  }
});

test('native builds and components in the executor (braid run --engine wasm) give the same outputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-run-'));
  for (const [n, c] of committed.cases.entries()) {
    const files = values(c).flat().map((v, i) => {
      const f = join(dir, `${n}-${i}`);
      writeFileSync(f, v);
      return f;
    });
    const args = ['run', `${root}/workflows/${c.workflow}.json`, ...files.flatMap((f) => ['--input', f])];
    // Natively, and, where the workflow builds for Wasm, its component in the executor.
    for (const engine of hasNode(c.workflow) ? ['native', 'wasm'] : ['native']) {
      const r = braidSync([...args, '--engine', engine]);
      assert.equal(r.status, 0, `${c.workflow} (${engine}): ${r.stderr}`);
      const printed = r.stdout.trim();
      assert.deepEqual(Array.isArray(c.output) ? JSON.parse(printed) : printed, c.output, `${c.workflow} (${engine})`);
    }
  }
});

test('braid run streams a file larger than its 1 MiB chunks (cidv1_from_bytes starts with op_multihash)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-run-'));
  const data = new Uint8Array((5 << 19) + 3).map((_, i) => (i * 131) >> 2);
  for (const [workflow, hasher] of [['cidv1_from_bytes', 'blake3'], ['cidv1_sha2_256', 'sha2-256']]) {
    for (const [name, bytes] of [['big', data], ['empty', new Uint8Array()]]) {
      const f = join(dir, `${workflow}-${name}`);
      writeFileSync(f, bytes);
      const r = braidSync(['run', `${root}/workflows/${workflow}.json`, '--input', f]);
      assert.equal(r.status, 0, `${workflow} ${name}: ${r.stderr}`);
      assert.equal(r.stdout.trim(), cid(bytes, { hasher, base: 'base32', codec: 'raw' }), `${workflow} ${name}`);
    }
  }
});

test('braid run reads `--input -` from standard input (streamed when it can), and exits 3 when the workflow fails', () => {
  const data = new Uint8Array((3 << 19) + 7).map((_, i) => (i * 7) >> 3);
  const r = braidSync(['run', `${root}/workflows/cidv1_from_bytes.json`, '--input', '-'], { input: data });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), cid(data));
  const text = braidSync(['run', `${root}/workflows/hex_sha256_of_text.json`, '--input', '-'], { input: 'hello world' });
  assert.equal(text.status, 0, text.stderr);
  assert.equal(text.stdout.trim(), 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9');
  const two = braidSync(['run', `${root}/workflows/salted_cid.json`, '--input', '-', '--input', '-'], { input: 'x' });
  assert.equal(two.status, 2);
  assert.match(two.stderr, /^error: only one --input can be `-` \(standard input\)/);
  const bad = braidSync(['run', `${root}/workflows/cid_of_base64.json`, '--input', '-'], { input: 'not base64!' });
  assert.equal(bad.status, 3, bad.stderr);
  assert.match(bad.stderr, /^error: workflow cid_of_base64 failed: /);
  assert.doesNotMatch(bad.stderr, /error: error/);
});

test('braid run takes named inputs as NAME=FILE, in any order, with positional ones filling the rest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-named-'));
  writeFileSync(join(dir, 'text.txt'), 'hello');
  writeFileSync(join(dir, 'bytes.bin'), 'world');
  const expected = cid(new TextEncoder().encode('helloworld'), { hasher: 'sha2-256' });
  const runWith = (...inputs) =>
    spawnSync(braid, ['run', `${root}/workflows/salted_cid.json`, ...inputs.flatMap((i) => ['--input', i])], { cwd: dir, encoding: 'utf8' });
  for (const inputs of [['bytes=bytes.bin', 'text=text.txt'], ['text.txt', 'bytes.bin'], ['bytes=bytes.bin', 'text.txt']]) {
    const r = runWith(...inputs);
    assert.equal(r.status, 0, `${inputs}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), expected, inputs.join(' '));
  }
  const twice = runWith('text=text.txt', 'text=text.txt');
  assert.equal(twice.status, 2);
  assert.match(twice.stderr, /input `text` is given twice/);
  const missing = runWith('bytes=bytes.bin');
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /takes 2 external input\(s\) \(text: String, bytes: Bytes\); got 1/);
  const validate = braidSync(['validate', `${root}/workflows/salted_cid.json`]);
  assert.match(validate.stdout, /text: String, bytes: Bytes -> Cid/);
});

test('TypeScript declarations are exact: no `any`, in any declaration file of any package', () => {
  for (const name of ['cidv1_from_bytes', 'dual_cid_of_text', 'salted_cid']) {
    const dts = readFileSync(`${out}/${name}/pkg/node/wf_${name}.d.ts`, 'utf8');
    assert.match(dts, /next\(inputs: Inputs\): Promise<Step>;/);
    for (const target of ['node', 'web', 'bundler']) {
      const dir = `${out}/${name}/pkg/${target}`;
      if (!existsSync(dir)) continue;
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.d.ts'))) {
        assert.doesNotMatch(readFileSync(`${dir}/${file}`, 'utf8'), /\bany\b/, `${name} ${target}/${file}`);
      }
    }
  }
  const salted = readFileSync(`${out}/salted_cid/pkg/node/wf_salted_cid.d.ts`, 'utf8');
  assert.match(salted, /export type Segment0Inputs = \[text: string\];/);
  assert.match(salted, /export type Segment1Inputs = \[bytes: Uint8Array\];/);
  assert.match(salted, /export type Inputs = Segment0Inputs \| Segment1Inputs;/);
  assert.match(salted, /export type RunInputs = \[text: string, bytes: Uint8Array\];/);
  const dual = readFileSync(`${out}/dual_cid_of_text/pkg/node/wf_dual_cid_of_text.d.ts`, 'utf8');
  // op_collect of two: TypeScript knows the length.
  assert.match(dual, /export type Output = \[string, string\];/);
});

// A new Workflow gets its Wasm object when first used; its first `next` on
// typed inputs makes one for the call alone (braid package/fast_run.rs).
// Every method answers as for an object made at once.
test('a new Workflow, used in any order, answers as one made with its Wasm object at once', async () => {
  const mod = load('cidv1_from_bytes');
  const bytes = new Uint8Array([1, 2, 3]);
  const expected = cid(bytes);
  const first = new mod.Workflow();
  const step = await first.next([bytes]);
  assert.deepEqual([step.done, step.output, typeof step.segmentTime, typeof step.totalTime], [true, expected, 'number', 'number']);
  assert.equal(first.done, true);
  await assert.rejects(first.next([bytes]), /the workflow is done; create a new Workflow/);
  assert.throws(() => first.suspend(), /already done/);
  first.free();
  first.free();
  assert.throws(() => first.done, /was freed/);
  assert.throws(() => first.next([bytes]), /was freed/);

  const unused = new mod.Workflow();
  assert.equal(unused.done, false);
  const state = unused.suspend();
  assert.equal((await mod.Workflow.resume(state).next([bytes])).output, expected);
  assert.equal((await unused.next([bytes])).output, expected);
  assert.equal(unused.done, true);

  const refused = new mod.Workflow();
  await assert.rejects(refused.next(['text']), /expected Uint8Array, found a string/);
  await assert.rejects(refused.next([bytes, bytes]), /expected 1 input\(s\), found 2/);
  assert.equal(refused.done, false);
  assert.equal((await refused.next([bytes])).output, expected);

  // A first `next` that fails inside Wasm leaves the workflow where `next`
  // leaves it (not done, its state that of a new one), with run's error.
  const b64 = load('cid_of_base64');
  const failing = new b64.Workflow();
  const bad = 'not base64!';
  const message = await b64.run([bad]).then(() => assert.fail('run accepted bad base64'), (e) => e.message);
  await assert.rejects(failing.next([bad]), (e) => e instanceof Error && e.message === message);
  assert.equal(failing.done, false);
  assert.deepEqual(failing.suspend(), new b64.Workflow().suspend());
  const good = Buffer.from(bytes).toString('base64');
  assert.equal((await failing.next([good])).output, await b64.run([good]));
  assert.equal(failing.done, true);

  const freed = new mod.Workflow();
  freed.free();
  assert.throws(() => freed.next([bytes]), /was freed/);
  assert.throws(() => mod.Workflow.prototype.next.call({}, [bytes]), /not a Workflow this package made/);
  // Many, none freed: each Wasm object was freed by its own call.
  for (let i = 0; i < 20000; i++) await new mod.Workflow().next([bytes]);
  assert.equal((await new mod.Workflow().next([bytes])).output, expected);
});

test('bad calls reject with an Error saying what was expected; the instance keeps working', async () => {
  const mod = load('salted_cid');
  const wf = new mod.Workflow();
  const bad = [
    [[], /salted_cid segment 0 inputs: expected 1 input\(s\), found 0/],
    [['a', 'b'], /expected 1 input\(s\), found 2/],
    [[new Uint8Array(1)], /salted_cid input 0 \(text\): expected string, found a Uint8Array/],
    [[null], /expected string, found null/],
    [null, /expected an Array of inputs, found null/],
    ['salt', /expected an Array of inputs, found a string/],
    [undefined, /found undefined/],
  ];
  for (const [inputs, message] of bad) {
    await assert.rejects(wf.next(inputs), (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && message.test(e.message));
  }
  assert.equal((await wf.next(['salt:'])).done, false);
  await assert.rejects(wf.next(['again']), /salted_cid input 1 \(bytes\): expected Uint8Array, found a string/);
  const step = await wf.next([inputValue({ pattern: 1000 }, root)]);
  assert.equal(step.output, committed.cases.find((c) => c.workflow === 'salted_cid').output);
  await assert.rejects(wf.next([new Uint8Array(1)]), /the workflow is done; create a new Workflow/);
  await assert.rejects(mod.run(['only one']), /run inputs: expected 2 input\(s\), found 1/);
  await assert.rejects(mod.run([1, new Uint8Array()]), /salted_cid input 0 \(text\): expected string, found a number/);
  assert.throws(() => mod.runSync(['only one']), /run inputs: expected 2 input\(s\), found 1/);
  assert.throws(() => mod.runSync([1, new Uint8Array()]), /salted_cid input 0 \(text\): expected string, found a number/);
});

test('a million new Workflow().next calls without free() run to their end (Node 20\'s V8 crashed on such a loop when it inlined the call)', () => {
  const pkg = `${out}/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes.js`;
  const script = `const wf = require(${JSON.stringify(pkg)});
    const bytes = new Uint8Array(64).fill(7);
    let last;
    for (let i = 0; i < 1000000; i++) last = new wf.Workflow().next([bytes]);
    last.then((step) => console.log(step.done));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, `exit ${r.status} (signal ${r.signal}): ${r.stderr.slice(0, 400)}`);
  assert.equal(r.stdout.trim(), 'true');
});

test('a workflow suspended in one process resumes in another', () => {
  const mod = load('salted_cid');
  const c = committed.cases.find((c) => c.workflow === 'salted_cid');
  const wf = new mod.Workflow();
  return wf.next(values(c)[0]).then(() => {
    const dir = mkdtempSync(join(tmpdir(), 'braid-resume-'));
    const state = join(dir, 'state.bin');
    writeFileSync(state, wf.suspend());
    const script = `
      const mod = require(${JSON.stringify(`${out}/salted_cid/pkg/node/wf_salted_cid.js`)});
      const bytes = new Uint8Array(require('fs').readFileSync(${JSON.stringify(state)}));
      const input = new Uint8Array(1000).map((_, i) => (i * 31 + 7) & 0xff);
      mod.Workflow.resume(bytes).next([input]).then((s) => console.log(s.output));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), c.output);
  });
});

test('resume refuses a state that is not this workflow\'s', async () => {
  const salted = load('salted_cid');
  const other = new (load('dual_cid_of_text').Workflow)();
  assert.throws(() => salted.Workflow.resume(other.suspend()), /cannot resume: the state belongs to workflow/);
  assert.throws(() => salted.Workflow.resume(new Uint8Array([1, 2, 3])), /codec: decode/);
  assert.throws(() => salted.Workflow.resume('text'), /Workflow.resume state: expected Uint8Array, found a string/);
});

test('the .wasm holds no absolute path of the build machine', () => {
  for (const name of ['cidv1_from_bytes', 'dual_cid_of_text', 'salted_cid']) {
    const wasm = readFileSync(`${out}/${name}/pkg/node/wf_${name}_bg.wasm`).toString('latin1');
    for (const p of [root, process.env.HOME, out].filter(Boolean)) {
      assert.ok(!wasm.includes(p), `${name}: contains ${p}`);
    }
  }
  assert.ok(existsSync(`${out}/cidv1_from_bytes/crate/Cargo.lock`));
});

test('a manifest full of hostile strings builds and behaves (generator/braid/tests/data/nasty.json)', async () => {
  const mod = require(`${out}/nasty/pkg/node/wf_self.js`);
  const bytes = new Uint8Array([0xfb, 0xff, 0x00]);
  const text = 'a"b\n';
  const expected = Buffer.concat([Buffer.from(text), Buffer.from(text), Buffer.from(bytes)]).toString('base64url');
  assert.equal(await mod.run([text, bytes]), expected);
  const dts = readFileSync(`${out}/nasty/pkg/node/wf_self.d.ts`, 'utf8');
  assert.match(dts, /export type RunInputs = \[string, Uint8Array\];/);
});

test('the web package (ES module + init) runs too, given the .wasm bytes', async () => {
  const dir = `${out}/dual_cid_of_text/pkg/web`;
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
  assert.equal(pkg.type, 'module');
  const mod = await import(`${dir}/${pkg.module}`);
  await mod.default({ module_or_path: readFileSync(`${dir}/wf_dual_cid_of_text_bg.wasm`) });
  const c = committed.cases.find((c) => c.workflow === 'dual_cid_of_text');
  assert.deepEqual(await mod.run(values(c).flat()), c.output);
});

test('the web package makes one instance: an init() still loading when initSync() makes it rejects, and the module runs on', async () => {
  const dir = `${out}/dual_cid_of_text/pkg/web`;
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
  // A module of its own (the test above initialised the other).
  const mod = await import(`${dir}/${pkg.module}?one-instance`);
  const bytes = readFileSync(`${dir}/wf_dual_cid_of_text_bg.wasm`);
  const loading = mod.default({ module_or_path: bytes });
  const exports = mod.initSync({ module: bytes });
  const c = committed.cases.find((c) => c.workflow === 'dual_cid_of_text');
  const before = mod.run(values(c).flat());
  await assert.rejects(loading, /^Error: initSync\(\) made this module's instance while init\(\) was loading it/);
  assert.deepEqual(await before, c.output);
  assert.deepEqual(await mod.run(values(c).flat()), c.output);
  assert.equal(await mod.default({ module_or_path: bytes }), exports, 'a later init() returns at once');
});

test('a state suspended natively resumes in Wasm (written by generator/braid/tests/consumer)', async () => {
  const mod = load('salted_cid');
  const state = new Uint8Array(readFileSync(`${out}/salted_cid/native-state.bin`));
  const step = await mod.Workflow.resume(state).next([inputValue({ pattern: 1000 }, root)]);
  assert.equal(step.output, committed.cases.find((c) => c.workflow === 'salted_cid').output);
});
