// ESLint's configuration for Braid's own JavaScript, run by `make test-lint`
// (`js/node_modules/.bin/eslint`, from the repository's root): the tests, benchmarks and scripts here, the
// editor's sources, the book's examples, braid-support's JavaScript, and the
// JavaScript Braid puts in its npm packages' glue
// (generator/braid/src/package/glue/). ESLint's recommended rules, with the
// globals each place runs with.
//
// A glue file is not a module: its code runs in the scope of wasm-bindgen's
// glue. What it takes from that scope it names in a `/* global */` comment,
// and what the glue calls of it in an `/* exported */` one, so the contract
// between the two is written in the file and checked here (`no-undef`,
// `no-unused-vars`).
import { createRequire } from 'node:module';

// ESLint and its packages are js/'s development dependencies.
const require = createRequire(new URL('js/package.json', import.meta.url));
const js = require('@eslint/js');
const globals = require('globals');

export default [
  {
    ignores: [
      '**/node_modules/**',
      'target/**',
      'docs/book/**',
      // Built by js/editor's build from js/editor/src.
      'generator/service/assets/**',
    ],
  },
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `catch {}` and `() => {}` say "nothing to do" in these files.
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests, benchmarks, scripts, the book's server and configurations: Node.
    files: ['*.mjs', 'js/**/*.{js,mjs,cjs}', 'docs/examples/photo-proof-server/**/*.mjs', '**/vite.config.js'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // Tests and benchmarks that drive Chromium: the functions they give
    // Playwright's `evaluate` run in the page.
    files: [
      'js/test/{browser,editor,examples,registry}.test.mjs',
      'js/bench/{lib,stream}.mjs',
    ],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Code run in the browser: the editor, the book's web example.
    files: ['js/editor/src/**/*.js', 'docs/examples/photo-proof-web/main.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // braid-support's JavaScript: ES modules of functions, which Braid puts
    // in every package's glue as namespaces, run by Node, browsers and
    // bundlers alike.
    files: ['operations/support/src/**/*.js'],
    languageOptions: { globals: { ...globals['shared-node-browser'] } },
  },
  {
    // Braid's code in its packages' glue: scripts in the glue's scope.
    files: ['generator/braid/src/package/glue/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals['shared-node-browser'] } },
  },
];
