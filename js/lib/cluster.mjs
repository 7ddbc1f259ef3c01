// A Braid deployment on this machine, loopback only, for the cluster tests
// and benchmarks: a private PostgreSQL (scripts/postgres.sh), a three-node
// Garage (scripts/garage.sh), and `braid serve` / `braid worker` processes
// sharing them, each in its own process group.
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AwsClient } from 'aws4fetch';
import { braid, killHard } from './server.mjs';
import { answering } from './wait.mjs';
import { root } from './paths.mjs';
const script = (name) => (...args) => execFileSync(`${root}/scripts/${name}.sh`, args, { encoding: 'utf8' }).trim();
export const pg = script('postgres');
export const garage = script('garage');

/** A free loopback port. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** A port P with P..P+21 free (Garage's node n takes P+10(n-1) and the port after), below the ephemeral range. */
async function freeBase() {
  const free = (port) =>
    new Promise((resolve) => {
      const s = createServer().once('error', () => resolve(false)).listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20000 + 100 * Math.floor(Math.random() * 100);
    if ((await Promise.all([0, 1, 10, 11, 20, 21].map((d) => free(base + d)))).every(Boolean)) return base;
  }
}

export class Deployment {
  constructor(prefix = 'braid-cluster-') {
    this.dir = mkdtempSync(join(tmpdir(), prefix));
    // PostgreSQL runs as its own user (scripts/postgres.sh): it must reach its directory.
    chmodSync(this.dir, 0o755);
    this.pgDir = join(this.dir, 'postgres');
    this.garageDir = join(this.dir, 'garage');
    this.processes = [];
  }

  /** Starts (or restarts) PostgreSQL and Garage; their ports are chosen once. */
  async backends() {
    this.pgPort ??= await freePort();
    this.garagePort ??= await freeBase();
    this.database = pg('start', this.pgDir, String(this.pgPort));
    this.store = garage('start', this.garageDir, String(this.garagePort));
    this.credentials = Object.fromEntries(garage('env', this.garageDir).split('\n').map((l) => l.split('=')));
  }

  /** `braid <role> --data <dir>/<name> ...args`; resolves once `ready` (whose group 1 is the URL) shows in its log. */
  start(role, name, args, ready, env = {}) {
    return new Promise((resolve, reject) => {
      const child = spawn(braid, [role, '--data', join(this.dir, name), ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
        env: { ...process.env, ...this.credentials, RUST_LOG: 'info', NO_COLOR: '1', ...env },
      });
      let log = '';
      let started = false;
      child.stderr.on('data', (chunk) => {
        log += chunk;
        const m = !started && log.match(ready);
        if (m) {
          started = true;
          const p = { name, child, url: m[1], log: () => log };
          this.processes.push(p);
          // An API is ready once it answers; a worker once it says so.
          (p.url.startsWith('http') ? answering(p.url) : Promise.resolve()).then(() => resolve(p), reject);
        }
      });
      child.on('exit', (code) => reject(new Error(`braid ${role} ${name} exited (${code}):\n${log}`)));
    });
  }

  /** The flags that put a process on the shared backends. */
  shared() {
    return ['--database', this.database, '--store', this.store];
  }

  api(name, key, args = []) {
    return this.start('serve', name, ['--addr', '127.0.0.1:0', '--api-key', key, ...args], /listening on (http:\/\/[0-9.:]+)\n/);
  }

  worker(name, args = [], env = {}) {
    return this.start('worker', name, [...this.shared(), ...args], /braid worker: (ready)/, env);
  }

  /** kill -9 of `p`, or of every braid process. */
  kill(p) {
    for (const q of p ? [p] : this.processes) killHard(q.child);
    this.processes = p ? this.processes.filter((q) => q !== p) : [];
  }

  /** The bucket as a client with its keys reaches it through Garage node `n` (1-3): `(key or ?query, init) => fetch`. */
  bucket(n) {
    const endpoint = new URL(this.store.replace(/^s3:/, 'http:')).searchParams.get('endpoint').split(',')[n - 1];
    const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = this.credentials;
    const s3 = new AwsClient({ accessKeyId, secretAccessKey, service: 's3', region: 'garage' });
    return (key, init) => s3.fetch(`${endpoint}/braid${key.startsWith('?') ? '' : '/'}${key}`, init);
  }

  /** Stops everything and removes the directory. */
  close() {
    this.kill();
    for (const stop of [() => pg('stop', this.pgDir), () => garage('stop', this.garageDir)]) {
      try {
        stop();
      } catch {}
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
