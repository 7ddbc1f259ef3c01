// `npx vite` serves the app, `npx vite build` writes it to dist/. The web
// package lives outside this directory (`braid build
// workflows/photo_proof.json -o target/wf/photo_proof`): an alias names it,
// and `server.fs.allow` lets the dev server read its files (the .wasm too).
// (A plain object, so the config needs nothing installed next to it.)
import { fileURLToPath } from 'node:url';

const pkg = process.env.PHOTO_PROOF_WEB ?? fileURLToPath(new URL('../../../target/wf/photo_proof/pkg/web', import.meta.url));

export default {
  resolve: { alias: { wf_photo_proof: `${pkg}/wf_photo_proof.js` } },
  server: { fs: { allow: ['.', pkg] } },
};
