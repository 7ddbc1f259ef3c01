// Writes the test vectors from the independent reference implementation:
// operations/vectors/cid.json and workflows/vectors.json. The Node tests
// check that the committed files still match what the reference computes.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { vectors, workflowVectors } from '../lib/reference.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const write = (rel, value) => {
  writeFileSync(`${root}/${rel}`, JSON.stringify(value, null, 2) + '\n');
  console.log(`wrote ${rel}`);
};
write('operations/vectors/cid.json', vectors());
write('workflows/vectors.json', workflowVectors(root, (p) => readFileSync(p)));
