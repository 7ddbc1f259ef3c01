// The Node side of the run endpoint's benchmark: what a JS user writes
// today to put a workflow behind HTTP, a `node:http` server calling the
// workflow's npm package (`runSync`) on the request body, answering its
// output as JSON. Usage: node run-node-server.mjs PACKAGE.js
// Prints `listening on http://ADDR` on stderr.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)(process.argv[2]);
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      const output = pkg.runSync([new Uint8Array(body.buffer, body.byteOffset, body.length)]);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(output));
    } catch (e) {
      res.writeHead(422, { 'content-type': 'text/plain' });
      res.end(String(e?.message ?? e));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.error(`listening on http://127.0.0.1:${server.address().port}`));
