// The book's page "Deploying a workflow to a component host"
// (docs/src/guide/http-hosts.md), run as written by `make test-docs`: its
// `braid build` line (its output directory made a temporary one), then each
// block's `wasmtime serve` or `jco serve` line (on a free port) and its
// `curl` line, whose answer must be what the page shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../lib/cluster.mjs';
import { braid, root } from '../lib/paths.mjs';
import { run } from '../lib/run.mjs';
import { killHard } from '../lib/server.mjs';
import { fetchPatiently, until } from '../lib/wait.mjs';

const wasmtime = process.env.BRAID_WASMTIME ?? 'wasmtime';
const jco = `${root}/js/node_modules/.bin/jco`;
const OUT = 'out/salted';

test("the page's commands build the HTTP function, serve it and answer as the page shows", async () => {
  const page = readFileSync(`${root}/docs/src/guide/http-hosts.md`, 'utf8');
  const blocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1].split('\n').filter(Boolean));
  assert.equal(blocks.length, 2, 'a block for wasmtime serve, one for jco serve');
  const out = mkdtempSync(join(tmpdir(), 'braid-http-hosts-'));
  try {
    const build = blocks.flat().find((l) => l.startsWith('braid build '));
    assert.ok(build?.includes(` -o ${OUT}`), `a braid build line writing ${OUT}`);
    await run(braid, build.replace(` -o ${OUT}`, ` -o ${out}`).split(' ').slice(1), { cwd: root });
    for (const lines of blocks) {
      const serveLine = lines.find((l) => /^(wasmtime|npx jco) serve /.test(l));
      const curlLine = lines.find((l) => l.startsWith('curl '));
      const shown = lines.find((l) => l.startsWith('# ')).slice(2);
      assert.ok(serveLine && curlLine && shown, lines.join('\n'));
      const port = String(await freePort());
      const [program, ...args] = serveLine.replace(/^npx /, '').replace('8080', port).split(' ');
      const path = args.findIndex((a) => a.startsWith(`${OUT}/`));
      assert.notEqual(path, -1, serveLine);
      args[path] = args[path].replace(OUT, out);
      const child = spawn(program === 'wasmtime' ? wasmtime : jco, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let log = '';
      child.stdout.on('data', (d) => (log += d));
      child.stderr.on('data', (d) => (log += d));
      try {
        const url = `http://127.0.0.1:${port}/`;
        await until(async () => {
          if (child.exitCode !== null) throw new Error(`${serveLine} exited (${child.exitCode}):\n${log}`);
          return (await fetchPatiently(url, {}, { timeoutMs: 1000 }).catch(() => null))?.ok;
        }, () => `${serveLine} did not answer:\n${log}`);
        const answer = await run('bash', ['-c', curlLine.replace('8080', port)]);
        // An answer shown cut short (`...}`) is compared up to the cut.
        const [head] = shown.split('...');
        assert.ok(answer.startsWith(head), `${curlLine}\nshown: ${shown}\ngot:   ${answer}`);
        if (!shown.includes('...')) assert.equal(answer, shown);
      } finally {
        killHard(child);
      }
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
