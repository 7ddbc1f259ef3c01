// A real `braid serve` for the tests: started on a free loopback port in
// its own process group (its builds have theirs), killed with the group.
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { root, braid } from './paths.mjs';
import { answering, fetchPatiently } from './wait.mjs';

export { braid };

// The tools a service's builds use, found as an operator's are: wasm-opt
// in the tools directory (`braid doctor --fix` installs binaryen into
// `$BRAID_TOOLS/node_modules`; here the checkout's js/), not on the PATH.
const toolsEnv = {
  BRAID_TOOLS: `${root}/js`,
  PATH: (process.env.PATH ?? '').split(delimiter).filter((dir) => !existsSync(join(dir, 'wasm-opt'))).join(delimiter),
};

/**
 * Starts `braid serve --data dataDir --api-key key ...args`; resolves once
 * it answers requests to { child, url, log() } (log: its stderr so far). With
 * `user` (from `ordinaryUser`, the tests running as root), the service
 * runs as that user; with `bin`, that `braid` rather than the one under test.
 * With `ready: 'starting'`, it resolves (with no `url`) as soon as the
 * server says it is starting: its signal handlers are in place, nothing
 * else is done yet.
 */
export function spawnServer({ dataDir, key, args = [], env = {}, user, bin = braid, ready = 'listening' }) {
  env = { ...toolsEnv, ...env };
  return new Promise((resolve, reject) => {
    let [cmd, argv] = [bin, ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, '--api-key', key, ...args]];
    if (user) {
      [cmd, argv] = user.wrap(cmd, argv);
      env = { ...user.env, ...env };
    }
    const child = spawn(cmd, argv, {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      env: { ...process.env, ...env },
    });
    let seen = '';
    let url;
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      if (ready === 'starting' && /braid serve: starting\n/.test(seen)) {
        resolve({ child, url, log: () => seen });
        return;
      }
      const m = seen.match(/listening on (http:\/\/[0-9.:]+)\n/);
      if (m && !url) {
        url = m[1];
        answering(url).then(() => resolve({ child, url, log: () => seen }), reject);
      }
    });
    child.on('exit', (code) => reject(new Error(`braid serve exited (${code}):\n${seen}`)));
  });
}

/**
 * An ordinary user (`uid`, with a new home of its own) to run a service as
 * when the tests run as root, as a deployment would: `{ uid, home, env,
 * wrap(cmd, args) }`; `chown(path)` gives it a file or directory. Its
 * cargo home is its own (dependencies are downloaded again); rustup's
 * toolchains are shared, read-only. Root's home, which such a user cannot
 * enter, is replaced (in a mount namespace of the service's own, so only
 * for it) by one that shows only the toolchain, the tools on the PATH and
 * this checkout.
 */
export function ordinaryUser(uid = 4242) {
  const home = mkdtempSync(join(tmpdir(), `braid-user-${uid}-`));
  const chown = (path) => chownSync(path, uid, uid);
  chown(home);
  const top = homedir();
  const rustupHome = process.env.RUSTUP_HOME ?? join(top, '.rustup');
  const closed = (statSync(top).mode & 0o001) === 0;
  const inside = (p) => p.startsWith(`${top}/`);
  const shown = [...new Set([rustupHome, root, ...process.env.PATH.split(delimiter)])].filter((p) => closed && inside(p) && existsSync(p));
  // $1 the closed home, $2 the uid, then the paths to show, `--`, the command.
  const script = `set -e
top=$1; uid=$2; shift 2
stash=$(mktemp -d)
mount --bind "$top" "$stash"
mount -t tmpfs -o mode=0755 braid-user "$top"
while [ "$1" != -- ]; do
  rel=\${1#"$top"/}; mkdir -p "$top/$rel"; mount --bind "$stash/$rel" "$top/$rel"; shift
done
shift
umount -l "$stash"; rmdir "$stash"
exec setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"`;
  return {
    uid,
    home,
    chown,
    env: {
      HOME: home,
      CARGO_HOME: join(home, '.cargo'),
      RUSTUP_HOME: rustupHome,
      BRAID_HOME: join(home, 'braid'),
      BRAID_TARGET_DIR: join(home, 'target'),
    },
    wrap: (cmd, args) => [
      'unshare',
      ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', top, String(uid), ...shown, '--', cmd, ...args],
    ],
  };
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
    const job = await (await fetchPatiently(`${url}/v1/jobs/${jobId}`, { headers: { 'x-api-key': key } })).json();
    if (until.includes(job.state)) return job;
    if (Date.now() - start > timeoutMs) throw new Error(`job ${jobId} still ${job.state}: ${job.progress}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Command lines of the processes that mention `text` (e.g. a job id). */
export function processesMentioning(text) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(text)) found.push(cmdline);
    } catch {}
  }
  return found;
}
