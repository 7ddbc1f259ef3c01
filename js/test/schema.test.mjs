// `braid schema`: the JSON Schema of manifests, read by a real validator
// (Ajv, draft 2020-12) as an editor would: every example manifest is valid
// under it, manifests that name it in `$schema` validate, and the mistakes
// an editor can catch while typing are errors under both it and `braid
// validate`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { root, braidSync } from '../lib/paths.mjs';


function schema() {
  const r = braidSync(['schema']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// Strict, but for `required` in the anyOf branches, which names properties defined beside them.
const validateWith = (s) => new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(s);

test('every example manifest is valid under the schema', () => {
  const valid = validateWith(schema());
  const names = readdirSync(`${root}/workflows`).filter((f) => f.endsWith('.json') && f !== 'vectors.json');
  assert.ok(names.length >= 10);
  for (const file of names) {
    const manifest = JSON.parse(readFileSync(`${root}/workflows/${file}`, 'utf8'));
    assert.equal(valid(manifest), true, `${file}: ${JSON.stringify(valid.errors)}`);
  }
});

test('a manifest naming the schema in $schema validates, and its id does not change', () => {
  const dir = mkdtempSync(join(tmpdir(), 'braid-schema-'));
  writeFileSync(join(dir, 'workflow.schema.json'), JSON.stringify(schema()));
  const manifest = JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8'));
  const named = { $schema: './workflow.schema.json', ...manifest };
  writeFileSync(join(dir, 'named.json'), JSON.stringify(named));
  const idOf = (path) => JSON.parse(braidSync(['validate', '--json', path]).stdout).id;
  assert.equal(idOf(join(dir, 'named.json')), idOf(`${root}/workflows/cidv1_from_bytes.json`));
  assert.equal(validateWith(schema())(named), true);
});

test('mistakes an editor can catch are errors under the schema and under braid validate', () => {
  const valid = validateWith(schema());
  const base = JSON.parse(readFileSync(`${root}/workflows/cidv1_from_bytes.json`, 'utf8'));
  const step = (s) => ({ ...base, segments: [{ inputs: [-1], sequence: [s] }] });
  const cases = {
    'an unknown operation': step({ operation: 'op_multihsh' }),
    'a config value the operation does not allow': step({ operation: 'op_multihash', config: { hasher: 'md5' } }),
    'a config key the operation does not have': step({ operation: 'op_multihash', config: { hashr: 'blake3' } }),
    'an unknown field': { ...base, extra: 1 },
    'no segments': { ...base, segments: [] },
    'a name that cannot name a crate': { ...base, name: '1 bad' },
    'a step with neither operation nor versionId': step({ version: '^0.1' }),
    'an input below -1': { ...base, segments: [{ inputs: [-2], sequence: base.segments[0].sequence }] },
    'an input named by a name that is no identifier': { ...base, inputs: ['Photo'], segments: [{ inputs: ['Photo'], sequence: base.segments[0].sequence }] },
  };
  const dir = mkdtempSync(join(tmpdir(), 'braid-schema-'));
  for (const [what, manifest] of Object.entries(cases)) {
    assert.equal(valid(manifest), false, `the schema accepts ${what}`);
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(manifest));
    const r = braidSync(['validate', file]);
    assert.equal(r.status, 1, `braid validate accepts ${what}: ${r.stderr}`);
  }
});
