// An esbuild plugin for wasm-bindgen's `bundler` target, which imports its
// `.wasm` as an ES module (the WebAssembly ESM integration that webpack and
// Vite plugins implement): the module is embedded as bytes, instantiated
// with its JS imports at top level, and its exports re-exported by name.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

export const wasmModules = {
  name: 'wasm-modules',
  setup(build) {
    build.onResolve({ filter: /\.wasm$/ }, (args) =>
      args.namespace === 'wasm-module'
        ? { path: args.path, namespace: 'wasm-bytes' }
        : { path: resolve(args.resolveDir, args.path), namespace: 'wasm-module' },
    );
    build.onLoad({ filter: /.*/, namespace: 'wasm-bytes' }, async (args) => ({ contents: await readFile(args.path), loader: 'binary' }));
    build.onLoad({ filter: /.*/, namespace: 'wasm-module' }, async (args) => {
      const module = new WebAssembly.Module(await readFile(args.path));
      const sources = [...new Set(WebAssembly.Module.imports(module).map((i) => i.module))];
      const exports = WebAssembly.Module.exports(module).map((e) => e.name);
      const contents = [
        `import bytes from ${JSON.stringify(args.path)};`,
        ...sources.map((s, i) => `import * as imports${i} from ${JSON.stringify(s)};`),
        `const { instance } = await WebAssembly.instantiate(bytes, { ${sources.map((s, i) => `${JSON.stringify(s)}: imports${i}`).join(', ')} });`,
        ...exports.map((e) => `export const ${e} = instance.exports[${JSON.stringify(e)}];`),
      ].join('\n');
      return { contents, resolveDir: dirname(args.path), loader: 'js' };
    });
  },
};
