// How the tests wait: for a condition they can observe (a state, a line
// in a log, a process gone, a port that answers), polled until a deadline
// generous enough for a machine busy with other work; never for a fixed
// time. docs/src/contributor/tests.md says when to use which.

/** A deadline for things that take a moment on a quiet machine: two minutes. */
export const PATIENCE_MS = 120_000;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` (sync or async) every `everyMs` until it returns a truthy
 * value, which it resolves to; fails with `message` (a string, or a
 * function giving one, for state read at the time) after `timeoutMs`.
 */
export async function until(check, message, { timeoutMs = PATIENCE_MS, everyMs = 100 } = {}) {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`${typeof message === 'function' ? message() : message} (waited ${Math.round(timeoutMs / 1000)} s)`);
    }
    await pause(everyMs);
  }
}

/** Resolves to `{ code, signal }` once `child` has exited (at once if it has). */
export function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Resolves to the match of `pattern` in what `stream` writes (a process's
 * stderr, say), from the moment this is called or earlier text `seen()`
 * gives; fails if the stream ends first or after `timeoutMs`.
 */
export function line(stream, pattern, { seen = () => '', timeoutMs = PATIENCE_MS } = {}) {
  return new Promise((resolve, reject) => {
    let text = seen();
    const done = (f) => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      f();
    };
    const onData = (chunk) => {
      text += chunk;
      const m = text.match(pattern);
      if (m) done(() => resolve(m));
    };
    const onEnd = () => done(() => reject(new Error(`the stream ended before ${pattern}:\n${text}`)));
    const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} within ${timeoutMs / 1000} s:\n${text}`))), timeoutMs);
    stream.on('data', onData);
    stream.on('end', onEnd);
    onData('');
  });
}

/** Errors of a connection that never carried the request: safe to try again. */
function refused(error) {
  const code = error?.cause?.code ?? error?.code;
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].includes(code);
}

/**
 * `fetch(url, init)` that tries again, until `timeoutMs`, while the
 * connection is refused or closed before an answer: for a server that
 * may be starting or busy. Only for requests that are safe to repeat.
 */
export async function fetchPatiently(url, init = {}, { timeoutMs = PATIENCE_MS } = {}) {
  const start = Date.now();
  for (;;) {
    try {
      return await fetch(url, init);
    } catch (e) {
      if (!refused(e) || Date.now() - start > timeoutMs) throw e;
      await pause(100);
    }
  }
}

/** Resolves once `url`'s `/healthz` answers (any status): the server takes requests. */
export async function answering(url, options) {
  await fetchPatiently(`${url}/healthz`, {}, options);
}
