// A trap never breaks a package (Node; the same check runs in Chromium in
// browser.test.mjs): the `trapping` workflow traps a hundred times in a row
// through every entry point, each call failing with an Error that says the
// module was reset, and then answers right, on fresh instances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { nestedTrapChecks, trapChecks } from '../lib/traps.mjs';
import { wfOut as out } from '../lib/paths.mjs';

const require = createRequire(import.meta.url);

test('a hundred traps in a row, then correct answers: the module resets after each', async () => {
  const wf = require(`${out}/trapping/pkg/node/wf_trapping.js`);
  assert.deepEqual(await trapChecks(wf), []);
});

test('a trap in a call made during another resets the module once the outer call returns, failing both', async () => {
  const wf = require(`${out}/trapping/pkg/node/wf_trapping.js`);
  assert.deepEqual(await nestedTrapChecks(wf), []);
});
