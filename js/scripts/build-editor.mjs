// Builds the editor page the service serves (js/editor/ -> the service's
// assets/editor/, compiled into `braid`): the page's modules and the
// sandboxed runner's (two entry points) bundled and minified
// by esbuild (one file, no source map: deterministic for a given esbuild
// and lock file), the page and its styles copied. `--check` builds in
// memory and fails if the committed assets differ (run by `make test-lint`).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { root } from '../lib/paths.mjs';

const src = join(root, 'js/editor');
const out = join(root, 'generator/service/assets/editor');
const check = process.argv.includes('--check');

// The runner is a classic script: its frame has an opaque origin, from which
// a module script of the service would be a cross-origin (CORS) fetch.
const bundle = async (entry, format) => {
  const result = await build({
    entryPoints: [join(src, 'src', entry)],
    bundle: true,
    minify: true,
    format,
    target: 'es2022',
    legalComments: 'eof',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0].contents;
};
const files = {
  'editor.js': await bundle('app.js', 'esm'),
  'runner.js': await bundle('runner.js', 'iife'),
  'runner.html': readFileSync(join(src, 'runner.html')),
  'index.html': readFileSync(join(src, 'index.html')),
  'editor.css': readFileSync(join(src, 'editor.css')),
};
let stale = [];
for (const [name, bytes] of Object.entries(files)) {
  if (check) {
    let committed;
    try {
      committed = readFileSync(join(out, name));
    } catch {
      committed = Buffer.alloc(0);
    }
    if (!Buffer.from(bytes).equals(committed)) stale.push(name);
  } else {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, name), bytes);
  }
}
if (stale.length) {
  console.error(`the editor's committed assets are stale (${stale.join(', ')}): run \`node js/scripts/build-editor.mjs\` and commit generator/service/assets/editor/`);
  process.exit(1);
}
console.log(check ? 'the editor assets are up to date' : `built the editor into ${out} (${(files['editor.js'].length / 1024).toFixed(0)} KB of script)`);
