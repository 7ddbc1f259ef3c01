// TypeScript consumers of the generated packages: a correct one type-checks
// with `tsc --strict --noEmit`; consumers passing wrong types fail to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { root, wfOut as out, opPkgs as ops } from '../lib/paths.mjs';

const tsc = `${root}/js/node_modules/.bin/tsc`;

/** Type-checks `source` in a fresh project; returns tsc's exit code and output. */
function check(source) {
  const dir = mkdtempSync(join(tmpdir(), 'braid-tsc-'));
  writeFileSync(join(dir, 'consumer.ts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'], skipLibCheck: false, types: [] },
      files: ['consumer.ts'],
    }),
  );
  const r = spawnSync(tsc, ['-p', dir], { encoding: 'utf8' });
  return { status: r.status, output: r.stdout + r.stderr };
}

const salted = `${out}/salted_cid/pkg/node/wf_salted_cid.js`;
const dual = `${out}/dual_cid_of_text/pkg/web/wf_dual_cid_of_text.js`;

test('a correct consumer of the workflow packages type-checks under --strict', () => {
  const r = check(`
    import { Workflow, run, type Step, type Output, type Inputs, type Segment1Inputs, runSync } from ${JSON.stringify(salted)};
    import init, { run as runDual } from ${JSON.stringify(dual)};
    import { execute } from ${JSON.stringify(`${ops}/op_multihash/node/op_multihash.js`)};
    export async function main(): Promise<string> {
      const wf = new Workflow();
      const first: Step = await wf.next(['salt:']);
      if (first.done) throw new Error('not yet');
      const second: Segment1Inputs = [new Uint8Array([1, 2, 3])];
      const inputs: Inputs = second;
      const last = await wf.next(inputs);
      const state: Uint8Array = wf.suspend();
      Workflow.resume(state).free();
      const out: Output = await run(['salt:', new Uint8Array(3)]);
      const same: string = runSync(['salt:', new Uint8Array(3)]);
      await init();
      const both: string[] = await runDual(['text']);
      // op_collect of two: a pair, which TypeScript knows.
      const [blake3, sha256]: [string, string] = await runDual(['text']);
      const mh: Uint8Array = await execute(new Uint8Array(1), { hasher: 'sha2-256' });
      return last.done ? last.output + out + same + both.join() + blake3 + sha256 + mh.length : out;
    }
  `);
  assert.equal(r.status, 0, r.output);
});

const images = `${out}/decoded_images/pkg/node/wf_decoded_images.js`;

test('a value type of one\'s own is an interface consumers type-check against under --strict', () => {
  const ok = check(`
    import { run, Workflow, type Image, type Output } from ${JSON.stringify(images)};
    export async function main(file: Uint8Array): Promise<number> {
      const given: Image = { width: 1, height: 1, pixels: new Uint8Array(4) };
      const out: Output = await run([file, given]);
      const first: Image = out[0];
      const wf = new Workflow();
      await wf.next([file]);
      const step = await wf.next([given]);
      return first.width * first.height + first.pixels.length + (step.done ? step.output.length : 0);
    }
  `);
  assert.equal(ok.status, 0, ok.output);
  const cases = [
    [`import { run } from ${JSON.stringify(images)}; run([new Uint8Array(), { width: 1, height: 1 }]);`, /Property 'pixels' is missing/],
    [`import { run } from ${JSON.stringify(images)}; run([new Uint8Array(), { width: '1', height: 1, pixels: new Uint8Array() }]);`, /Type 'string' is not assignable to type 'number'/],
    [`import { run } from ${JSON.stringify(images)}; const [i] = await run([new Uint8Array(), { width: 1, height: 1, pixels: new Uint8Array() }]); const s: string = i.pixels;`, /Type 'Uint8Array.*' is not assignable to type 'string'/],
  ];
  for (const [source, message] of cases) {
    const r = check(`export {};\n${source}\n`);
    assert.notEqual(r.status, 0, `should not type-check:\n${source}`);
    assert.match(r.output, message, source);
  }
});

const thumbs = `${out}/thumbnail_hashes/pkg/node/wf_thumbnail_hashes.js`;
const proof = `${out}/photo_proof/pkg/node/wf_photo_proof.js`;

test('value types from a crate no step uses, and a record output, type-check under --strict', () => {
  const ok = check(`
    import { run, Workflow, type Image, type Size } from ${JSON.stringify(thumbs)};
    import { run as prove, type PhotoProof } from ${JSON.stringify(proof)};
    export async function main(file: Uint8Array): Promise<string> {
      const image: Image = { width: 8, height: 8, pixels: new Uint8Array(256) };
      const size: Size = { width: 8, height: 8 };
      const [dhash, phash]: string[] = await run([image, size, size]);
      const wf = new Workflow();
      await wf.next([image, size]);
      const again = Workflow.resume(wf.suspend());
      const step = await again.next([size]);
      const p: PhotoProof = await prove([file]);
      const n: number = p.width * p.height;
      return dhash + phash + p.fileCid + p.pixelsCid + p.blockhash + n + step.done;
    }
  `);
  assert.equal(ok.status, 0, ok.output);
  const cases = [
    [`import { run } from ${JSON.stringify(thumbs)}; run([{ width: 1, height: 1, pixels: new Uint8Array() }, { width: 1 }, { width: 1, height: 1 }]);`, /Property 'height' is missing/],
    [`import { run } from ${JSON.stringify(proof)}; const p = await run([new Uint8Array()]); const c: number = p.fileCid;`, /Type 'string' is not assignable to type 'number'/],
    [`import { run } from ${JSON.stringify(proof)}; const p = await run([new Uint8Array()]); p.file_cid;`, /Property 'file_cid' does not exist/],
  ];
  for (const [source, message] of cases) {
    const r = check(`export {};\n${source}\n`);
    assert.notEqual(r.status, 0, `should not type-check:\n${source}`);
    assert.match(r.output, message, source);
  }
});

const cidv1 = `${out}/cidv1_from_bytes/pkg/web/wf_cidv1_from_bytes.js`;

test('streaming and batches type-check under --strict: stream(), runStream of a Blob, a File, a ReadableStream and an async iterable, runMany', () => {
  const r = check(`
    import { stream, runStream, runMany, type Stream, type StreamSource, type Output } from ${JSON.stringify(cidv1)};
    async function* chunks(): AsyncGenerator<Uint8Array> { yield new Uint8Array(3); }
    export async function main(file: File): Promise<string[]> {
      const s: Stream = stream();
      s.update(new Uint8Array([1, 2]));
      const one: Output = s.finish();
      s.free();
      const sources: StreamSource[] = [file, new Blob([new Uint8Array(4)]), new ReadableStream<Uint8Array>(), chunks()];
      const many: string[] = await runMany([[new Uint8Array(1)], [new Uint8Array(2)]]);
      return [one, ...(await Promise.all(sources.map(runStream))), ...many];
    }
  `);
  assert.equal(r.status, 0, r.output);
});

test('consumers passing wrong types fail to type-check, at the wrong value', () => {
  const cases = [
    [`import { type Segment0Inputs } from ${JSON.stringify(salted)}; const first: Segment0Inputs = [new Uint8Array()];`, /Type 'Uint8Array<ArrayBuffer>' is not assignable to type 'string'/],
    [`import { stream } from ${JSON.stringify(cidv1)}; stream().update('text');`, /Argument of type 'string' is not assignable to parameter of type 'Uint8Array/],
    [`import { runStream } from ${JSON.stringify(cidv1)}; runStream(new Uint8Array(3));`, /not assignable to parameter of type 'StreamSource'/],
    [`import { runStream } from ${JSON.stringify(cidv1)}; const n: number = await runStream(new Blob());`, /Type 'string' is not assignable to type 'number'/],
    [`import { runMany } from ${JSON.stringify(cidv1)}; runMany([['text']]);`, /Type 'string' is not assignable to type 'Uint8Array/],
    [`import { Stream } from ${JSON.stringify(cidv1)}; new Stream();`, /Constructor of class 'Stream' is private/],
    [`import { run } from ${JSON.stringify(salted)}; run([42, new Uint8Array()]);`, /Type 'number' is not assignable to type 'string'/],
    [`import { run } from ${JSON.stringify(dual)}; const [a, b, c] = await run(['t']);`, /Tuple type 'Output' of length '2' has no element at index '2'/],
    [`import { runSync } from ${JSON.stringify(salted)}; const n: number = runSync(['a', new Uint8Array()]);`, /Type 'string' is not assignable to type 'number'/],
    [`import { run } from ${JSON.stringify(salted)}; run(['only one']);`, /Source has 1 element\(s\) but target requires 2|not assignable/],
    [`import { Workflow } from ${JSON.stringify(salted)}; new Workflow().next([null]);`, /not assignable/],
    [`import { run } from ${JSON.stringify(salted)}; const s: number = await run(['a', new Uint8Array()]);`, /Type 'string' is not assignable to type 'number'/],
    [`import { Workflow } from ${JSON.stringify(salted)}; const s = await new Workflow().next(['a']); const o: string = s.output;`, /undefined/],
    [`import { execute } from ${JSON.stringify(`${ops}/op_multihash/node/op_multihash.js`)}; execute(new Uint8Array(), { hasher: 'md5' });`, /"md5"/],
    [`import { execute } from ${JSON.stringify(`${ops}/op_multihash/node/op_multihash.js`)}; execute('text');`, /Argument of type 'string' is not assignable to parameter of type 'Uint8Array/],
  ];
  for (const [source, message] of cases) {
    const r = check(`export {};\n${source}\n`);
    assert.notEqual(r.status, 0, `should not type-check:\n${source}`);
    assert.match(r.output, message, source);
    assert.match(r.output, /consumer\.ts\(2,/, 'the error points at the consumer line');
  }
});
