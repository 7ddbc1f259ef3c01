// A real `braid serve` for the tests: started on a free loopback port in
// its own process group (its builds have theirs), killed with the group.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
export const braid = process.env.BRAID_BIN ?? `${root}/target/debug/braid`;

/**
 * Starts `braid serve --data dataDir --api-key key ...args`; resolves once
 * it listens to { child, url, log() } (log: its stderr so far).
 */
export function spawnServer({ dataDir, key, args = [], env = {} }) {
  return new Promise((resolve, reject) => {
    const child = spawn(braid, ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, '--api-key', key, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      env: { ...process.env, ...env },
    });
    let seen = '';
    let url;
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      const m = seen.match(/listening on (http:\/\/[0-9.:]+)\n/);
      if (m && !url) {
        url = m[1];
        resolve({ child, url, log: () => seen });
      }
    });
    child.on('exit', (code) => reject(new Error(`braid serve exited (${code}):\n${seen}`)));
  });
}

/** Kills a server and everything in its process group. */
export function killHard(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

/**
 * Polls a build job at `url` until it is in one of `until`; its JSON (its
 * log and error shown, since `key` is the service's API key).
 */
export async function waitJob(url, jobId, { key, until = ['succeeded', 'failed'], timeoutMs = 600_000 } = {}) {
  const start = Date.now();
  for (;;) {
    const job = await (await fetch(`${url}/v1/jobs/${jobId}`, { headers: { 'x-api-key': key } })).json();
    if (until.includes(job.state)) return job;
    if (Date.now() - start > timeoutMs) throw new Error(`job ${jobId} still ${job.state}: ${job.progress}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
