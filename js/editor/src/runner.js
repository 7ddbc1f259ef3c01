// The page that runs workflows for the editor, in a sandboxed frame: an
// opaque origin (its `Content-Security-Policy: sandbox allow-scripts`), so
// the packages' code, which may include JavaScript from any operation's
// crate, cannot read the editor's API key or call the service as the user;
// it may fetch nothing at all (`connect-src 'none'`). Two requests from the
// editor (its parent), each answered with its `id`:
//
// - `{ id, cid, bytes, inputs }`: "Try it here": the built workflow's web
//   package (loaded once per cid) run on `inputs`; answers `{ id, output }`
//   (as text) or `{ id, error }`.
// - `{ id, preview: { steps, externals, packages } }`: each step's output
//   (preview.js), each step by its operation's own web package
//   (`step.package`, a cid of `packages` or of an earlier request; every
//   package sent is kept),
//   answers `{ id, results }`: per step `{ pointer, summary, full, image? }`
//   or `{ pointer, error }` or `{ pointer, skipped }`.
import { loadWebPackage, show } from './package.js';
import { runPreview } from './preview.js';

// WebRTC reaches the network whatever `connect-src` says, so its
// constructors are gone before any package code runs (the frame may start
// no worker or frame of its own, `worker-src 'none'` and `default-src
// 'none'`, where fresh ones could be found).
for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCSessionDescription', 'RTCIceCandidate']) {
  Object.defineProperty(globalThis, name, { value: undefined, writable: false, configurable: false });
}

/** Loaded packages by cid (a workflow's or an operation's). */
const modules = new Map();
const load = (cid, bytes) => {
  if (!modules.has(cid)) {
    if (!bytes) return Promise.reject(new Error(`no package ${cid} was given`));
    modules.set(cid, loadWebPackage(bytes));
  }
  return modules.get(cid);
};

/** The whole of a value shown is at most this many characters, */
const FULL = 200_000;
/** and of each of its byte arrays at most this many bytes. */
const BYTES_SHOWN = 50_000;
/** An image is sent back for display up to this size a side (the page's limit too). */
const IMAGE_SIDE = 4096;

/**
 * A step's value as the editor shows it: a one-line summary, the whole
 * (clipped), an image's pixels (a copy, whose buffer `transfer` gets).
 */
function shown(value, transfer) {
  const text = show(value, BYTES_SHOWN) ?? String(value);
  const full = text.length > FULL ? `${text.slice(0, FULL)}… (${text.length} characters)` : text;
  const { width, height, pixels } = value ?? {};
  if (Number.isInteger(width) && Number.isInteger(height) && pixels instanceof Uint8Array && pixels.length === width * height * 4) {
    const drawn = width > 0 && height > 0 && width <= IMAGE_SIDE && height <= IMAGE_SIDE;
    const image = drawn ? { width, height, pixels: pixels.slice() } : undefined;
    if (image) transfer.push(image.pixels.buffer);
    return { summary: `${width}×${height} image`, full, image };
  }
  if (value instanceof Uint8Array) {
    const hex = [...value.subarray(0, 12)].map((b) => b.toString(16).padStart(2, '0')).join('');
    return { summary: `${value.length} bytes: 0x${hex}${value.length > 12 ? '…' : ''}`, full };
  }
  const line = text.replace(/\s+/g, ' ');
  return { summary: line.length > 80 ? `${line.slice(0, 79)}…` : line, full };
}

async function preview({ steps, externals, packages }, transfer) {
  // Every package given is kept, whether a step of this run needs it or
  // not (the page sends each once); one that does not load fails the
  // steps that use it, each alone.
  for (const [cid, bytes] of Object.entries(packages ?? {})) load(cid, bytes).catch(() => {});
  const execute = async (step, args, entry) => {
    if (entry.unavailable) throw new Error(entry.unavailable);
    return (await load(entry.package)).executeSync(...args, step.config ?? {});
  };
  const results = await runPreview(steps, externals, execute, (_, entry) => entry.flow);
  return results.map((r) => ('value' in r ? { pointer: r.pointer, ...shown(r.value, transfer) } : r));
}

addEventListener('message', async (event) => {
  if (event.source !== parent) return;
  const { id, cid, bytes, inputs, preview: asked } = event.data ?? {};
  try {
    if (asked) {
      const started = performance.now();
      const transfer = [];
      const results = await preview(asked, transfer);
      parent.postMessage({ id, results, ms: performance.now() - started }, '*', transfer);
      return;
    }
    const module = await load(cid, bytes);
    const started = performance.now();
    const output = await module.run(inputs);
    parent.postMessage({ id, output: show(output), ms: performance.now() - started }, '*');
  } catch (e) {
    parent.postMessage({ id, error: String(e?.message ?? e) }, '*');
  }
});
parent.postMessage({ ready: true }, '*');
