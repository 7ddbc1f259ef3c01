// A built workflow's web package (`pkg-web.tgz`, an artifact of the
// service) loaded in the page: gunzipped and untarred in memory, its
// modules turned into blob URLs (each relative import pointed at the blob
// of the file it names), its Wasm given as bytes. Nothing is written or
// fetched from elsewhere.

/** The files of a .tgz: path (without the `package/` prefix) -> bytes. */
export async function untgz(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const tar = new Uint8Array(await new Response(stream).arrayBuffer());
  const text = (a, b) => new TextDecoder().decode(tar.subarray(a, b)).replace(/\0.*$/s, '');
  const files = new Map();
  for (let at = 0; at + 512 <= tar.length;) {
    const name = text(at, at + 100);
    if (!name) break;
    const size = Number.parseInt(text(at + 124, at + 136).trim() || '0', 8);
    const prefix = text(at + 345, at + 500);
    const type = String.fromCharCode(tar[at + 156] || 48);
    const path = (prefix ? `${prefix}/${name}` : name).replace(/^package\//, '');
    if (type === '0' || type === '\0') files.set(path, tar.slice(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

const join = (base, rel) => {
  const parts = base.split('/').slice(0, -1);
  for (const p of rel.split('/')) {
    if (p === '..') parts.pop();
    else if (p !== '.') parts.push(p);
  }
  return parts.join('/');
};

/** Imports `path` of `files` as a module, its relative imports resolved within `files`. */
async function importFrom(files, path, urls = new Map()) {
  if (urls.has(path)) return urls.get(path);
  const source = new TextDecoder().decode(files.get(path));
  const specifiers = [...source.matchAll(/(?:from\s*|import\s*\(?\s*)(['"])(\.\.?\/[^'"]+)\1/g)].map((m) => m[2]);
  const resolved = new Map();
  for (const spec of new Set(specifiers)) {
    const target = join(path, spec);
    if (!files.has(target)) throw new Error(`the package's ${path} imports ${spec}, which it does not contain`);
    resolved.set(spec, await importFrom(files, target, urls));
  }
  const rewritten = source.replace(/((?:from\s*|import\s*\(?\s*)(['"]))(\.\.?\/[^'"]+)\2/g, (all, head, q, spec) => `${head}${resolved.get(spec)}${q}`);
  const url = URL.createObjectURL(new Blob([rewritten], { type: 'text/javascript' }));
  urls.set(path, url);
  return url;
}

/** The workflow module of a web package (.tgz bytes), initialised: `{ run, runSync, ... }`. */
export async function loadWebPackage(bytes) {
  const files = await untgz(bytes);
  const pkg = JSON.parse(new TextDecoder().decode(files.get('package.json')));
  const entry = pkg.module ?? pkg.main;
  const wasm = [...files.keys()].find((p) => p.endsWith('_bg.wasm'));
  if (!entry || !files.has(entry) || !wasm) throw new Error('this is not a web package of a workflow: no module or no .wasm');
  const module = await import(/* @vite-ignore */ await importFrom(files, entry));
  await module.default({ module_or_path: files.get(wasm) });
  return module;
}

/**
 * An output as text: bytes in hex, big integers as digits, records as
 * JSON. Bytes past `bytesShown` of one array are left out, saying how many
 * there are (a photo's pixels are tens of megabytes).
 */
export function show(value, bytesShown = Infinity) {
  return JSON.stringify(value, (_, v) => {
    if (v instanceof Uint8Array) {
      const hex = Array.from(v.subarray(0, bytesShown), (b) => b.toString(16).padStart(2, '0')).join('');
      return v.length > bytesShown ? `0x${hex}… (${v.length} bytes)` : `0x${hex}`;
    }
    if (typeof v === 'bigint') return v.toString();
    return v;
  }, 2);
}
