// Where the tests and benchmarks find the checkout and what `make` built for
// them: one place for the paths and the environment the Makefile hands on
// (BRAID_BIN, BRAID_WF_OUT, BRAID_OP_PKGS), each with the default a test run
// by hand from js/ (`node --test test/x.test.mjs`) finds after `make test`;
// and running the `braid` under test.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The checkout's root, without a trailing slash. */
export const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
/** The `braid` binary under test. */
export const braid = process.env.BRAID_BIN ?? `${root}/target/debug/braid`;
/** Every example workflow built for every target it allows (`make test-workflows`): `<name>/pkg/<target>/`. */
export const wfOut = process.env.BRAID_WF_OUT ?? `${root}/target/wf`;
/** Every Wasm-capable operation packaged alone for npm (`make test-wasm`): `<op>/<target>/`. */
export const opPkgs = process.env.BRAID_OP_PKGS ?? `${root}/target/npm`;

/** The example manifest `workflows/<name>.json`, parsed. */
export const manifest = (name) => JSON.parse(readFileSync(`${root}/workflows/${name}.json`, 'utf8'));

/** Runs `braid ARGS` to its end: spawnSync's result, output as text. */
export const braidSync = (args, options = {}) => spawnSync(braid, args, { encoding: 'utf8', ...options });
