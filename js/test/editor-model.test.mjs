// The editor's model without a page (js/editor/src/model.js): version
// requirements read as cargo reads them, the manifest written from a graph
// drawn in another order than the one a person reads, and what a manifest
// cannot say (an output not last, no output).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { caret, emptyGraph, fromManifest, locate, satisfies, toManifest } from '../editor/src/model.js';
import { root } from '../lib/paths.mjs';

// The registry as the service lists it, from the operations' manifests.
const registry = readdirSync(join(root, 'operations'))
  .filter((d) => d.startsWith('op_'))
  .map((d) => JSON.parse(readFileSync(join(root, 'operations', d, 'manifest.json'), 'utf8')))
  .map((m) => ({ name: m.name, version: m.version, version_id: `id-${m.name}`, manifest: m }));

test('version requirements: caret by default, exact with =, as cargo reads them', () => {
  const cases = [
    ['0.1.5', '^0.1', true], ['0.2.0', '^0.1', false], ['0.1.0', '0.1', true], ['0.1.2', '0.1.3', false],
    ['1.9.0', '^1.2', true], ['2.0.0', '^1.2', false], ['1.1.0', '^1.2', false], ['0.0.3', '^0.0.3', true],
    ['0.0.4', '^0.0.3', false], ['0.1.2', '=0.1.2', true], ['0.1.3', '=0.1.2', false], ['3.1.4', '*', true],
    ['0.1.0', 'junk', false],
  ];
  for (const [version, req, expected] of cases) assert.equal(satisfies(version, req), expected, `${version} ${req}`);
  assert.equal(caret('0.1.7'), '^0.1');
  assert.equal(caret('2.3.0'), '^2');
});

test('a graph drawn out of order is written in the order a person reads it', () => {
  // salted_cid drawn backwards: the output and the last operations first, the inputs last.
  const manifest = JSON.parse(readFileSync(join(root, 'workflows/salted_cid.json'), 'utf8'));
  const drawn = fromManifest(manifest);
  const graph = emptyGraph();
  const nodes = [...drawn.nodes.values()].reverse();
  nodes.forEach((n, k) => graph.nodes.set(n.id, { ...n, order: k, at: undefined, slot: n.kind === 'input' ? undefined : n.slot }));
  graph.edges = drawn.edges;
  graph.meta = { ...drawn.meta, style: 'name' };
  const { manifest: written, problems } = toManifest(graph, registry);
  assert.deepEqual(problems, []);
  // Two segments: op_utf8 alone (its output goes to a step of two inputs), then the chain.
  assert.deepEqual(written.segments.map((s) => s.sequence.map((o) => o.operation)), [['op_utf8'], ['op_collect', 'op_concat', 'op_multihash', 'op_cid']]);
  assert.equal(written.segments[1].inputs[0], 0);
  assert.equal(typeof written.segments[1].inputs[1], 'string');
  assert.deepEqual([...written.inputs].sort(), ['bytes', 'text']);
});

test('what a manifest cannot say is said before the validator: no output, an output not last', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'workflows/dual_cid_of_text.json'), 'utf8'));
  const graph = fromManifest(manifest);
  const output = [...graph.nodes.values()].find((n) => n.kind === 'output');
  const utf8 = [...graph.nodes.values()].find((n) => n.ref?.operation === 'op_utf8');
  // The output taken from op_utf8, whose output the other segments use.
  graph.edges = graph.edges.filter((e) => e.to !== output.id).concat({ from: utf8.id, to: output.id, port: 0 });
  const { problems } = toManifest(graph, registry);
  assert.equal(problems.length, 1);
  assert.equal(problems[0].node, utf8.id);
  assert.match(problems[0].message, /the output must come from the last step/);
  graph.edges = graph.edges.filter((e) => e.to !== output.id);
  assert.match(toManifest(graph, registry).problems[0].message, /connect the last operation to the output/);
  // Pointers name the deepest element known.
  const { pointers } = toManifest(fromManifest(manifest), registry);
  assert.deepEqual(Object.keys(locate(pointers, '/segments/1/sequence/0/config/hasher')), ['node', 'key']);
  assert.equal(locate(pointers, '/segments/3/inputs/1').port, 1);
  assert.deepEqual(locate(pointers, '/description'), { field: 'description' });
  assert.deepEqual(locate(pointers, '/nowhere/at/all'), {});
});

test('an open port is a problem in the graph\'s words, naming the node, the port and what to connect', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'workflows/photo_proof.json'), 'utf8'));
  const graph = fromManifest(manifest);
  const decode = [...graph.nodes.values()].find((n) => n.ref?.operation === 'op_image_decode');
  const proof = [...graph.nodes.values()].find((n) => n.ref?.operation === 'op_photo_proof');
  assert.deepEqual(toManifest(graph, registry).problems, []);
  // The photo no longer goes to the decoder, nor the blockhash to the proof.
  graph.edges = graph.edges.filter((e) => e.to !== decode.id && !(e.to === proof.id && e.port === 2));
  const { problems, manifest: written } = toManifest(graph, registry);
  assert.deepEqual(problems.map((p) => [p.node, p.port]), [[decode.id, 0], [proof.id, 2]]);
  assert.match(problems[0].message, /^op_image_decode's input 0 \(`\w+`\), a Bytes, is not connected: connect an external input or another step's output of that type to it$/);
  assert.match(problems[1].message, /^op_photo_proof's input 2 \(`blockhash`\), a String, is not connected/);
  // Each keeps the pointer of the segment's inputs it makes wrong.
  const at = (p) => written.segments[Number(p.pointer.split('/')[2])];
  assert.equal(at(problems[0]).sequence[0].operation, 'op_image_decode');
  assert.equal(at(problems[1]).sequence[0].operation, 'op_photo_proof');
});
