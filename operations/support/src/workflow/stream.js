// The JS side of a generated workflow's `runStream(source)`
// (src/workflow/js.rs): reads a source chunk by chunk into a workflow
// stream (`stream()`'s object: `update`, `finish`, `free`), one chunk in
// flight at a time, and settles with its output. Written as `export
// function` declarations only: js.rs imports them from the glue's scope as
// the namespace `braidStreams`, which Braid makes of this file and binds
// at the top of every package's glue (generator/braid/src/package/glue.rs).

const { asyncIterator } = Symbol;

/**
 * Reads `source` into `stream` and resolves to `stream.finish()`; rejects
 * with the first error (of the source, or of a chunk `update` refused),
 * after cancelling the source. The stream is freed either way.
 */
export function braidRunStream(source, stream) {
  return drive(source, stream);
}

async function drive(source, stream) {
  try {
    const chunks = chunksOf(source);
    try {
      for (;;) {
        const { done, value } = await chunks.next();
        if (done) break;
        stream.update(value);
      }
    } catch (error) {
      await chunks.cancel(error);
      throw error;
    }
    return stream.finish();
  } finally {
    stream.free();
  }
}

/**
 * `{ next, cancel }` over a WHATWG ReadableStream, a Blob (or File), or an
 * async iterable (a Node Readable); a TypeError saying what is taken for
 * anything else.
 */
function chunksOf(source) {
  if (typeof source === 'object' && source !== null) {
    if (typeof source.getReader === 'function') return fromReader(source.getReader());
    if (typeof source.stream === 'function' && typeof source.arrayBuffer === 'function') return fromReader(source.stream().getReader());
    if (typeof source[asyncIterator] === 'function') {
      const iterator = source[asyncIterator]();
      return {
        next: () => iterator.next(),
        cancel: async (error) => {
          if (typeof iterator.return === 'function') await quietly(() => iterator.return(error));
        },
      };
    }
  }
  throw new TypeError(`runStream: expected a ReadableStream, a Blob or File, or an async iterable of Uint8Array (such as a Node Readable), found ${kindOf(source)}`);
}

function fromReader(reader) {
  return {
    next: () => reader.read(),
    cancel: (error) => quietly(() => reader.cancel(error)),
  };
}

/** Runs `f` and waits for it, ignoring its errors (a source that fails to cancel). */
async function quietly(f) {
  try {
    await f();
  } catch {
    // The error that stopped the stream is the one to report.
  }
}

/** What a value is, for the error (`undefined`, `a string`, `a Uint8Array`). */
function kindOf(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  return /^[AEIO]/.test(tag) ? `an ${tag}` : `a ${tag}`; // a Uint8Array, an Int8Array
}
