// The page that runs a built workflow for the editor's "Try it here", in
// a sandboxed frame: an opaque origin (its `Content-Security-Policy:
// sandbox allow-scripts`), so the package's code, which may include
// JavaScript from any operation's crate, cannot read the editor's API key
// or call the service as the user; it may fetch nothing at all
// (`connect-src 'none'`). It takes { id, cid, bytes, inputs } from the
// editor (its parent), loads the web package (once per cid), runs it and
// answers { id, output } (as text) or { id, error }.
import { loadWebPackage, show } from './package.js';

// WebRTC reaches the network whatever `connect-src` says, so its
// constructors are gone before any package code runs (the frame may start
// no worker or frame of its own, `worker-src 'none'` and `default-src
// 'none'`, where fresh ones could be found).
for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCSessionDescription', 'RTCIceCandidate']) {
  Object.defineProperty(globalThis, name, { value: undefined, writable: false, configurable: false });
}

const modules = new Map();

addEventListener('message', async (event) => {
  if (event.source !== parent) return;
  const { id, cid, bytes, inputs } = event.data ?? {};
  try {
    if (!modules.has(cid)) modules.set(cid, await loadWebPackage(bytes));
    const started = performance.now();
    const output = await modules.get(cid).run(inputs);
    parent.postMessage({ id, output: show(output), ms: performance.now() - started }, '*');
  } catch (e) {
    parent.postMessage({ id, error: String(e?.message ?? e) }, '*');
  }
});
parent.postMessage({ ready: true }, '*');
