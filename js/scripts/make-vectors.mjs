// Writes operations/vectors/cid.json from the independent reference
// implementation. The Node test checks the committed file still matches it.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { vectors } from '../lib/reference.mjs';

const out = fileURLToPath(new URL('../../operations/vectors/cid.json', import.meta.url));
writeFileSync(out, JSON.stringify(vectors(), null, 2) + '\n');
console.log(`wrote ${out}`);
