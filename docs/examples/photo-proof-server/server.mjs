// A Node HTTP server that answers POST /proof with the proof of the photo
// in the request body: photo_proof's Node package, loaded once, called per
// request. Start it with `node server.mjs` (PORT, default 8080), then:
//   curl --data-binary @photo.jpg http://127.0.0.1:8080/proof
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

// Where `braid build workflows/photo_proof.json -o target/wf/photo_proof`
// wrote the package (or `npm install` it and require 'wf_photo_proof').
const pkg = process.env.PHOTO_PROOF_PKG ?? new URL('../../../target/wf/photo_proof/pkg/node/wf_photo_proof.js', import.meta.url).pathname;
const { run } = createRequire(import.meta.url)(pkg);

/** Photos larger than this are refused before they are read whole. */
const MAX_BYTES = 32 << 20;

export function proofServer() {
  return createServer(async (req, res) => {
    const answer = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/proof') return answer(404, { error: 'POST a photo to /proof' });
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
      size += chunk.length;
      if (size > MAX_BYTES) return answer(413, { error: `a photo is at most ${MAX_BYTES} bytes` });
      chunks.push(chunk);
    }
    try {
      // { fileCid, pixelsCid, blockhash, width, height }
      answer(200, await run([new Uint8Array(Buffer.concat(chunks))]));
    } catch (e) {
      // Not a PNG or JPEG, truncated, too many pixels: the message says which.
      answer(422, { error: e.message });
    }
  });
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const port = Number(process.env.PORT ?? 8080);
  proofServer().listen(port, '127.0.0.1', () => console.log(`POST photos to http://127.0.0.1:${port}/proof`));
}
