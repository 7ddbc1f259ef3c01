// The service as a package source, with the real clients: a `braid serve`
// builds two workflows, then from fresh projects `cargo add` takes both
// from its Cargo registry (/cargo/index/) and one Rust program runs them
// (sharing braid-support and the operations they have in common), and
// `npm install` takes one from its npm registry (/npm/) and runs it in Node
// as an ES module and as CommonJS, and in Chromium bundled with no
// configuration by webpack 5, Vite 7 and 8 (dev server and build), Rollup
// and esbuild. Also: a scope, a version kept when a later build of it
// differs, the registries' refusals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { cid, input } from '../lib/reference.mjs';
import { run } from '../lib/run.mjs';
import { killHard, spawnServer, waitJob } from '../lib/server.mjs';
import { CHROMIUM, CHROMIUM_FLAGS, serve } from '../lib/static-server.mjs';
import { root, manifest, braidSync } from '../lib/paths.mjs';

const KEY = 'registry-key';
const work = mkdtempSync(join(tmpdir(), 'braid-registry-'));
const JS = ['node', 'web', 'bundler'];
// What the two workflows give for "hello world", from an independent implementation.
const HELLO = input(11);
const EXPECTED = {
  cidv1_from_bytes: cid(HELLO, { hasher: 'blake3' }),
  cidv1_sha2_256: cid(HELLO, { hasher: 'sha2-256' }),
};

let server;
/** The project that `npm install`ed wf_cidv1_from_bytes from the registry. */
const npmProject = join(work, 'npm-consumer');


async function publish(url, body) {
  const res = await fetch(`${url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  assert.ok(res.status === 200 || res.status === 202, JSON.stringify(answer));
  if (answer.job_id) {
    const job = await waitJob(url, answer.job_id, { key: KEY });
    assert.equal(job.state, 'succeeded', `${job.error}\n${job.log_tail}`);
  }
}

before(async () => {
  server = await spawnServer({ dataDir: join(work, 'data'), key: KEY, args: ['--workers', '1'] });
  for (const name of Object.keys(EXPECTED)) {
    await publish(server.url, { manifest: manifest(name), targets: ['native', ...JS] });
  }
});
after(() => killHard(server.child));

test('cargo add takes two workflows from the registry and one program runs both', async () => {
  const project = join(work, 'consumer');
  await run('cargo', ['new', '--quiet', '--bin', '--vcs', 'none', project]);
  mkdirSync(join(project, '.cargo'));
  writeFileSync(
    join(project, '.cargo/config.toml'),
    `[registries.braid]\nindex = "sparse+${server.url}/cargo/index/"\n`,
  );
  // A home of its own: nothing cached from another run of this test.
  const env = { ...process.env, CARGO_HOME: join(work, 'cargo-home'), CARGO_TARGET_DIR: join(root, 'target/registry-consumer') };
  mkdirSync(env.CARGO_HOME);
  await run('cargo', ['add', '--quiet', 'wf_cidv1_from_bytes', 'wf_cidv1_sha2_256', '--registry', 'braid'], { cwd: project, env });
  const toml = readFileSync(join(project, 'Cargo.toml'), 'utf8');
  assert.match(toml, /wf_cidv1_from_bytes = \{ version = "0\.1\.0", registry = "braid" \}/);
  writeFileSync(
    join(project, 'src/main.rs'),
    `fn main() {
    let input = b"hello world".to_vec();
    let blake3 = wf_cidv1_from_bytes::run_sync(input.clone()).expect("cidv1_from_bytes runs");
    let sha256 = wf_cidv1_sha2_256::run_sync(input).expect("cidv1_sha2_256 runs");
    println!("{blake3}\\n{sha256}");
}
`,
  );
  const out = await run('cargo', ['run', '--quiet'], { cwd: project, env });
  assert.deepEqual(out.trim().split('\n'), [EXPECTED.cidv1_from_bytes, EXPECTED.cidv1_sha2_256]);
  // One braid-support and one op_multihash for both: the registry's, by version.
  const lock = readFileSync(join(project, 'Cargo.lock'), 'utf8');
  for (const crate of ['braid-support', 'op_multihash', 'op_cid']) {
    const entries = lock.split('[[package]]').filter((p) => p.includes(`name = "${crate}"\n`));
    assert.equal(entries.length, 1, `${crate} once in Cargo.lock`);
    assert.match(entries[0], /source = "sparse\+http:\/\/127\.0\.0\.1:\d+\/cargo\/index\/"/);
  }
});

test('npm install takes a workflow from the registry; it runs in Node as ESM and CommonJS', async () => {
  const project = npmProject;
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--cache', join(work, 'npm-cache'), '--registry', `${server.url}/npm/`, 'wf_cidv1_from_bytes'], {
    cwd: project,
  });
  const pkg = join(project, 'node_modules/wf_cidv1_from_bytes');
  const json = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  assert.equal(json.license, 'MIT OR Apache-2.0');
  assert.ok(json.exports['.'].node && json.exports['.'].default && json.exports['./web']);
  for (const t of JS) assert.ok(existsSync(join(pkg, t, 'wf_cidv1_from_bytes.d.ts')), `${t} types`);
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  assert.match(readme, /Bytes -> Cid/);
  assert.match(readme, /import \{ run \} from 'wf_cidv1_from_bytes'/);
  const esm = "import { run } from 'wf_cidv1_from_bytes'; console.log(await run([new TextEncoder().encode('hello world')]));";
  assert.equal((await run('node', ['--input-type=module', '-e', esm], { cwd: project })).trim(), EXPECTED.cidv1_from_bytes);
  const cjs = "require('wf_cidv1_from_bytes').run([new TextEncoder().encode('hello world')]).then(console.log)";
  assert.equal((await run('node', ['-e', cjs], { cwd: project })).trim(), EXPECTED.cidv1_from_bytes);
});

test('the registries serve what the artifacts hold, and say no clearly', async () => {
  const config = await (await fetch(`${server.url}/cargo/index/config.json`)).json();
  assert.equal(config.dl, `${server.url}/cargo/crates`);
  const lines = (await (await fetch(`${server.url}/cargo/index/wf/_c/wf_cidv1_from_bytes`)).text()).trim().split('\n');
  assert.equal(lines.length, 1);
  const entry = JSON.parse(lines[0]);
  const crate = Buffer.from(await (await fetch(`${config.dl}/wf_cidv1_from_bytes/0.1.0/download`)).arrayBuffer());
  const { createHash } = await import('node:crypto');
  assert.equal(createHash('sha256').update(crate).digest('hex'), entry.cksum);
  for (const [path, status] of [
    ['/cargo/index/wf/_c/wf_nothing_here', 404],
    ['/cargo/index/xx/yy/wf_cidv1_from_bytes', 404],
    ['/cargo/crates/wf_cidv1_from_bytes/9.9.9/download', 404],
    ['/npm/wf_nothing_here', 404],
    ['/npm/wf_cidv1_from_bytes/-/wf_cidv1_from_bytes-9.9.9.tgz', 404],
  ]) {
    const res = await fetch(`${server.url}${path}`);
    assert.equal(res.status, status, path);
    assert.match((await res.json()).detail, /no /, path);
  }
  // A later build of the same name and version with other content: the
  // registries keep serving the first (a published version never changes).
  const changed = { ...manifest('cidv1_from_bytes'), description: 'the same version, other content' };
  await publish(server.url, { manifest: changed, targets: ['native', ...JS] });
  const again = (await (await fetch(`${server.url}/cargo/index/wf/_c/wf_cidv1_from_bytes`)).text()).trim().split('\n');
  assert.deepEqual(again, lines);
  const doc = await (await fetch(`${server.url}/npm/wf_cidv1_from_bytes`)).json();
  assert.equal(doc.versions['0.1.0'].description, manifest('cidv1_from_bytes').description);
});

test('a scope names the npm package: @org/wf_name', async () => {
  const s = await spawnServer({
    dataDir: join(work, 'scoped'),
    key: KEY,
    args: ['--workers', '1', '--npm-scope', '@braid-test'],
  });
  try {
    await publish(s.url, { manifest: manifest('cidv1_from_bytes'), targets: JS });
    const project = join(work, 'scoped-consumer');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--cache', join(work, 'npm-cache'), '--registry', `${s.url}/npm/`, '@braid-test/wf_cidv1_from_bytes'], {
      cwd: project,
    });
    const esm = "import { run } from '@braid-test/wf_cidv1_from_bytes'; console.log(await run([new TextEncoder().encode('hello world')]));";
    assert.equal((await run('node', ['--input-type=module', '-e', esm], { cwd: project })).trim(), EXPECTED.cidv1_from_bytes);
  } finally {
    killHard(s.child);
  }
  const bad = braidSync(['serve', '--data', join(work, 'bad'), '--api-key', KEY, '--npm-scope', 'org']);
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /npm scope "org" is not `@` and a lowercase name/);
});

// A page's module: the workflow through each entry point, its outputs in
// window.result (or the error).
const APP = `import { run, runSync, Workflow } from 'wf_cidv1_from_bytes';
const hello = () => new TextEncoder().encode('hello world');
(async () => [await run([hello()]), runSync([hello()]), (await new Workflow().next([hello()])).output])().then(
  (outputs) => { window.result = outputs; },
  (e) => { window.result = 'error: ' + e; },
);
`;

/** A new app directory in the npm project: main.js and an index.html that loads it. */
function app(name) {
  const dir = join(npmProject, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'main.js'), APP);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="./main.js"></script>\n');
  return dir;
}

/** Bundles `dir/main.js` into `dir/dist/` with one bundler, configured only with its entry and output. */
const BUNDLERS = {
  'webpack 5': async (dir) => {
    const { default: webpack } = await import('webpack');
    const stats = await new Promise((resolve, reject) =>
      webpack({ mode: 'production', context: dir, entry: './main.js', output: { path: join(dir, 'dist'), filename: 'main.js' } }, (e, s) =>
        e ? reject(e) : resolve(s),
      ),
    );
    assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
  },
  rollup: async (dir) => {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const bundle = await rollup({ input: join(dir, 'main.js'), plugins: [nodeResolve({ browser: true })], logLevel: 'silent' });
    await bundle.write({ dir: join(dir, 'dist'), format: 'es' });
  },
  esbuild: async (dir) => {
    const { build } = await import('esbuild');
    await build({ entryPoints: [join(dir, 'main.js')], bundle: true, format: 'esm', outdir: join(dir, 'dist'), logLevel: 'error' });
  },
  'vite 7 build': (dir) => viteBuild('vite7', dir),
  'vite 8 build': (dir) => viteBuild('vite', dir),
};

async function viteBuild(vite, dir) {
  const { build } = await import(vite);
  await build({ root: dir, configFile: false, logLevel: 'error', build: { outDir: join(dir, 'dist') } });
}

/** Opens `url` in Chromium and waits for the app's window.result. */
async function resultAt(url) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // Generous for a busy machine: a dev server transforms on first request.
    await page.goto(url, { timeout: 120_000 });
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 120_000 }).catch(() => {});
    const result = await page.evaluate(() => window.result);
    assert.ok(result !== undefined, `no result at ${url}; page errors: ${errors.join('; ')}`);
    return result;
  } finally {
    await browser.close();
  }
}

const EXPECTED_IN_PAGE = () => [EXPECTED.cidv1_from_bytes, EXPECTED.cidv1_from_bytes, EXPECTED.cidv1_from_bytes];

for (const [name, bundle] of Object.entries(BUNDLERS)) {
  test(`the npm package bundled by ${name} runs in Chromium`, async () => {
    const dir = app(name.replace(/\W+/g, '-'));
    await bundle(dir);
    const page = existsSync(join(dir, 'dist/index.html')) ? '/index.html' : '/page.html?script=/main.js';
    const site = await serve({ '/': join(dir, 'dist') });
    try {
      assert.deepEqual(await resultAt(`${site.base}${page}`), EXPECTED_IN_PAGE());
    } finally {
      site.close();
    }
  });
}

for (const vite of ['vite7', 'vite']) {
  test(`the npm package runs in Chromium from the ${vite === 'vite' ? 'Vite 8' : 'Vite 7'} dev server`, async () => {
    const { createServer } = await import(vite);
    const dir = app(`${vite}-dev`);
    const dev = await createServer({ root: dir, configFile: false, logLevel: 'error', server: { host: '127.0.0.1', port: 0 } });
    await dev.listen();
    try {
      const url = dev.resolvedUrls.local[0];
      assert.deepEqual(await resultAt(url), EXPECTED_IN_PAGE());
    } finally {
      await dev.close();
    }
  });
}
