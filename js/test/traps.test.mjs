// A trap never breaks a package (Node; the same check runs in Chromium in
// browser.test.mjs): the `trapping` workflow traps a hundred times in a row
// through every entry point, each call failing with an Error that says the
// module was reset, and then answers right, on fresh instances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { trapChecks } from '../lib/traps.mjs';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const out = process.env.BRAID_WF_OUT ?? `${root}/target/wf`;

test('a hundred traps in a row, then correct answers: the module resets after each', async () => {
  const wf = require(`${out}/trapping/pkg/node/wf_trapping.js`);
  assert.deepEqual(await trapChecks(wf), []);
});
