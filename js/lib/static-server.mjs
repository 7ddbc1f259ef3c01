// A tiny static file server on 127.0.0.1 for browser tests and benchmarks:
// URL prefixes map to directories; `/page.html?script=URL` is a page that
// runs one ES module.
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };

/** Serves `mounts` ({ '/prefix/': '/dir' }); resolves to { base, close }. */
export async function serve(mounts) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module" src="${url.searchParams.get('script')}"></script>`);
      return;
    }
    const prefix = Object.keys(mounts).find((p) => url.pathname.startsWith(p));
    // normalize() drops any `..`, so a request cannot leave its directory.
    const file = prefix && join(mounts[prefix], normalize(`/${url.pathname.slice(prefix.length)}`));
    if (!file || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

/** Flags for Debian's Chromium on these machines (see TOOLCHAIN.md). */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
