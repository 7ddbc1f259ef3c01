// Commands the tests run, without blocking the event loop. A test that
// blocks it (spawnSync) for longer than a server's keep-alive timeout and
// then fetches reuses a pooled connection whose close by the server it never
// got to see: "fetch failed" (undici: "other side closed"). Awaiting the
// child instead lets the loop take the close in, and fetch opens a new one.
import { execFile } from 'node:child_process';

/** Runs `cmd args`; resolves to its stdout, or rejects with its output. */
export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...opts }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(' ')} (${error.code ?? error.signal}):\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
