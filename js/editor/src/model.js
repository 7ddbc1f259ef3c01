// The editor's model, without a canvas: a workflow as a graph (external
// inputs, operations, the output; edges into numbered ports), the manifest
// written from it and the graph opened from a manifest, the type rules a
// connection must pass (the validator's: exact types, one type T for every
// input of a flow-control operation), and which node, port or field a
// diagnostic's JSON pointer names. Pure, so Node tests it as the page runs it.

/** @typedef {{ name: string, version: string, version_id: string, manifest: any }} Operation */

/**
 * A graph: `meta` (name, version, description, groups, and how the manifest
 * it came from named its inputs), `nodes` (id -> node) and `edges`
 * ({ from, to, port }: from a node's output into port `port` of `to`).
 * A node is { id, kind: 'input' | 'op' | 'output', order } and, for an
 * input, `name` and `slot` (its place when opened); for an operation, `ref`
 * ({ operation, version, versionId, config, hasConfig }) and `at` ({ segment,
 * position } when opened: kept so that saving writes the segments in the
 * order they were read).
 */
export function emptyGraph() {
  return {
    meta: { name: 'my_workflow', version: '0.1.0', description: 'A workflow made in the Braid editor', groups: [], hasGroups: false, style: 'name' },
    nodes: new Map(),
    edges: [],
  };
}

/** Caret-requirement matching of `version` against `req` (`^0.1`, `0.1.2`, `=0.1.2`, `*`), as cargo reads them. */
export function satisfies(version, req) {
  const parse = (v) => v.split(/[.+-]/).slice(0, 3).map((n) => Number.parseInt(n, 10));
  req = req.trim();
  if (req === '*' || req === '') return true;
  const exact = req.startsWith('=');
  const r = req.replace(/^[=^]/, '').split('.').map((n) => Number.parseInt(n, 10));
  const v = parse(version);
  if (r.some(Number.isNaN) || v.some(Number.isNaN)) return false;
  if (exact) return r.every((n, i) => v[i] === n);
  // Caret: the left-most non-zero part given must match, the rest at least as given.
  const cmp = (a, b) => { for (let i = 0; i < 3; i++) { if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0); } return 0; };
  if (cmp(v, r) < 0) return false;
  const pinned = r[0] !== 0 ? 1 : r.length > 1 && r[1] !== 0 ? 2 : Math.min(r.length, 3);
  return r.slice(0, pinned).every((n, i) => v[i] === n);
}

/** The requirement a person writes for `version`: `^0.1` for 0.1.x, `^2` for 2.x. */
export function caret(version) {
  const [major, minor] = version.split('.');
  return major === '0' ? `^0.${minor}` : `^${major}`;
}

/** The registered operation a reference names: by version id, else the newest version its requirement allows. */
export function resolve(registry, ref) {
  if (ref.versionId) return registry.find((op) => op.version_id === ref.versionId) ?? null;
  const versions = registry.filter((op) => op.name === ref.operation);
  return versions.filter((op) => satisfies(op.version, ref.version ?? '*')).sort(newestFirst)[0] ?? null;
}

function newestFirst(a, b) {
  const pa = a.version.split('.').map(Number);
  const pb = b.version.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pb[i] - pa[i];
  return 0;
}

/** The versions of operation `name` in the registry, newest first. */
export function versionsOf(registry, name) {
  return registry.filter((op) => op.name === name).sort(newestFirst).map((op) => op.version);
}

/** Every operation, newest version of each name first, sorted by name. */
export function newest(registry) {
  const by = new Map();
  for (const op of [...registry].sort(newestFirst)) if (!by.has(op.name)) by.set(op.name, op);
  return [...by.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export const isFlow = (manifest) => (manifest?.groups ?? []).includes('FLOWCONTROL');

/** The edges into `id`, by port. */
export function incoming(graph, id) {
  return graph.edges.filter((e) => e.to === id).sort((a, b) => a.port - b.port);
}

/** The edges out of `id`. */
export function outgoing(graph, id) {
  return graph.edges.filter((e) => e.from === id);
}

/** How many input ports `node` shows: an operation's declared inputs; a flow-control one, one more than it has connected. */
export function portCount(graph, node, registry) {
  if (node.kind === 'input') return 0;
  if (node.kind === 'output') return 1;
  const m = resolve(registry, node.ref)?.manifest;
  const used = incoming(graph, node.id).reduce((n, e) => Math.max(n, e.port + 1), 0);
  if (!m) return used;
  return isFlow(m) ? used + 1 : Math.max(m.inputs.length, used);
}

const substitute = (type, param, withType) => type.replace(new RegExp(`\\b${param}\\b`, 'g'), withType);

/** The type of a flow-control operation's T, from what feeds it (null: not known yet). */
function boundParam(graph, node, registry, seen) {
  for (const e of incoming(graph, node.id)) {
    const t = outputType(graph, e.from, registry, seen);
    if (t) return t;
  }
  return null;
}

/** The type node `id` outputs; null while it is not known (an input not connected yet, a generic not bound). */
export function outputType(graph, id, registry, seen = new Set()) {
  const node = graph.nodes.get(id);
  if (!node || seen.has(id)) return null;
  seen.add(id);
  if (node.kind === 'input') {
    for (const e of outgoing(graph, id)) {
      const t = inputType(graph, e.to, e.port, registry, seen, id);
      if (t) return t;
    }
    return null;
  }
  if (node.kind !== 'op') return null;
  const m = resolve(registry, node.ref)?.manifest;
  if (!m?.output) return null;
  if (!isFlow(m)) return m.output;
  const t = boundParam(graph, node, registry, seen);
  return t ? substitute(m.output, m.inputs[0], t) : null;
}

/** The type port `port` of node `id` takes; null when any type fits (the output, an unbound T). `except`: a source not to count. */
export function inputType(graph, id, port, registry, seen = new Set(), except = null) {
  const node = graph.nodes.get(id);
  if (node?.kind !== 'op') return null;
  const m = resolve(registry, node.ref)?.manifest;
  if (!m) return null;
  if (!isFlow(m)) return m.inputs[port] ?? null;
  for (const e of incoming(graph, id)) {
    if (e.from === except || seen.has(e.from)) continue;
    const t = outputType(graph, e.from, registry, new Set(seen));
    if (t) return t;
  }
  return null;
}

/** A port's label: `bytes: Bytes`, or the type alone. */
export function portLabel(graph, node, port, registry) {
  if (node.kind === 'output') return 'output';
  const m = resolve(registry, node.ref)?.manifest;
  if (!m) return `input ${port}`;
  if (isFlow(m)) return `${m.input_names?.[0] ?? 'input'} ${port}: ${inputType(graph, node.id, port, registry) ?? m.inputs[0]}`;
  const name = m.input_names?.[port];
  return name ? `${name}: ${m.inputs[port]}` : (m.inputs[port] ?? `input ${port}`);
}

function describePort(graph, node, port, registry) {
  if (node.kind === 'output') return 'the output';
  const name = resolve(registry, node.ref)?.manifest?.input_names?.[port];
  return `${node.ref.operation ?? 'the operation'}'s input ${port}${name ? ` (\`${name}\`)` : ''}`;
}

/** Whether `to` can reach `from` along edges (a new edge from -> to would close a cycle). */
function reaches(graph, to, from) {
  const stack = [to];
  const seen = new Set();
  while (stack.length) {
    const id = stack.pop();
    if (id === from) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const e of outgoing(graph, id)) stack.push(e.to);
  }
  return false;
}

/**
 * Whether an edge from `from`'s output into port `port` of `to` fits, by the
 * validator's rules: `{ ok: true }` or `{ ok: false, reason }`, the reason
 * as a person reads it (`Multihash into a Bytes input: ...`). An edge
 * already in that port is left out (dropping there replaces it).
 */
export function canConnect(graph, from, to, port, registry) {
  const source = graph.nodes.get(from);
  const target = graph.nodes.get(to);
  if (!source || !target) return { ok: false, reason: 'no such node' };
  if (source.kind === 'output') return { ok: false, reason: 'the output has no output port' };
  if (target.kind === 'input') return { ok: false, reason: 'an external input takes nothing' };
  if (from === to || reaches(graph, to, from)) return { ok: false, reason: 'this connection would make a cycle: a workflow runs each step once, in order' };
  const trial = { ...graph, edges: graph.edges.filter((e) => !(e.to === to && e.port === port)) };
  if (target.kind === 'output') {
    if (outgoing(trial, from).some((e) => graph.nodes.get(e.to)?.kind === 'output')) return { ok: false, reason: 'already connected to the output' };
    return { ok: true };
  }
  const want = inputType(trial, to, port, registry);
  const m = resolve(registry, target.ref)?.manifest;
  if (!m) return { ok: true };
  if (source.kind === 'input') {
    // An input given to several places takes one type.
    const has = outputType(trial, from, registry);
    if (has && want && has !== want) {
      return { ok: false, reason: `${has} into a ${want} input: this external input already goes to ${has} inputs; use another input` };
    }
    if (isFlow(m) && !want && !has && !incoming(trial, to).some((e) => graph.nodes.get(e.from)?.kind === 'op')) {
      return { ok: true, note: `${target.ref.operation} will need an input from an operation too, so that its type T is known` };
    }
    return { ok: true };
  }
  const have = outputType(trial, from, registry);
  if (have && want && have !== want) {
    return { ok: false, reason: `${have} into a ${want} input: ${describePort(graph, target, port, registry)} takes ${want}; ${source.ref.operation} outputs ${have}` };
  }
  return { ok: true };
}

/** The operations of `graph` that continue another's segment: a map from each operation to the one after it. */
function chains(graph, registry) {
  const next = new Map();
  for (const node of graph.nodes.values()) {
    if (node.kind !== 'op' || node.at?.position === 0) continue;
    const ins = incoming(graph, node.id);
    if (ins.length !== 1) continue;
    const prev = graph.nodes.get(ins[0].from);
    if (prev?.kind !== 'op' || outgoing(graph, prev.id).length !== 1) continue;
    const m = resolve(registry, node.ref)?.manifest;
    if (m && !isFlow(m) && m.inputs.length !== 1) continue;
    if (node.at && prev.at && node.at.segment !== prev.at.segment) continue;
    next.set(prev.id, node.id);
  }
  return next;
}

/**
 * The manifest `graph` stands for, written as a person would (keys in the
 * usual order; segments in the order they were opened, new ones after,
 * each after those it uses; named inputs unless it was opened with `-1`s
 * and still can be), and `pointers`: JSON pointer -> { node, port, key,
 * field } for the diagnostics. `problems`: what the manifest cannot say
 * (found here, before the validator).
 */
export function toManifest(graph, registry) {
  const pointers = new Map();
  const problems = [];
  const next = chains(graph, registry);
  const chained = new Set(next.values());
  const ops = [...graph.nodes.values()].filter((n) => n.kind === 'op');
  const segmentOf = new Map();
  const segments = ops.filter((n) => !chained.has(n.id)).map((head) => {
    const steps = [head];
    for (let id = next.get(head.id); id && !steps.some((s) => s.id === id); id = next.get(id)) steps.push(graph.nodes.get(id));
    return { head, steps, last: steps.at(-1) };
  });
  segments.forEach((s, i) => s.steps.forEach((n) => segmentOf.set(n.id, i)));
  const output = [...graph.nodes.values()].find((n) => n.kind === 'output');
  const final = output ? incoming(graph, output.id)[0]?.from : undefined;
  // Order: each segment after those it uses; among those ready, the output's last, then as opened, then as made.
  const deps = segments.map((s) => new Set(incoming(graph, s.head.id).map((e) => segmentOf.get(e.from)).filter((i) => i !== undefined)));
  const key = (i) => [segments[i].last.id === final ? 1 : 0, segments[i].head.at?.segment ?? Infinity, segments[i].head.order];
  const less = (a, b) => { const [x, y] = [key(a), key(b)]; for (let k = 0; k < 3; k++) if (x[k] !== y[k]) return x[k] < y[k]; return false; };
  const order = [];
  const placed = new Set();
  while (order.length < segments.length) {
    let pick = -1;
    for (let i = 0; i < segments.length; i++) {
      if (placed.has(i) || [...deps[i]].some((d) => !placed.has(d))) continue;
      if (pick < 0 || less(i, pick)) pick = i;
    }
    if (pick < 0) pick = segments.findIndex((_, i) => !placed.has(i)); // a cycle: cannot happen from the canvas
    placed.add(pick);
    order.push(pick);
  }
  const indexOf = new Map(order.map((s, i) => [s, i]));
  if (final !== undefined && segmentOf.has(final) && indexOf.get(segmentOf.get(final)) !== order.length - 1) {
    problems.push({ node: final, message: 'the output must come from the last step: other steps use what this one gives, so connect the output to the step after them' });
  }
  if (output && final === undefined && ops.length) problems.push({ node: output.id, message: 'connect the last operation to the output' });

  // External inputs: `-1`s in order when opened so and each is used once; names otherwise.
  const inputs = [...graph.nodes.values()].filter((n) => n.kind === 'input').sort((a, b) => (a.slot ?? Infinity) - (b.slot ?? Infinity) || a.order - b.order);
  const byIndex = graph.meta.style === 'index' && inputs.every((n) => outgoing(graph, n.id).length === 1);
  const names = new Map();
  const used = new Set(inputs.map((n) => n.name).filter(Boolean));
  for (const n of inputs) {
    let name = n.name;
    for (let k = 0; !name; k++) {
      const candidate = k ? `input_${k}` : 'input';
      if (!used.has(candidate)) { name = candidate; used.add(name); }
    }
    names.set(n.id, name);
  }
  const appearance = [];
  const manifestSegments = order.map((s, i) => {
    const seg = segments[s];
    const pointer = `/segments/${i}`;
    pointers.set(pointer, { node: seg.last.id });
    pointers.set(`${pointer}/inputs`, { node: seg.head.id });
    const segInputs = incoming(graph, seg.head.id).map((e, k) => {
      pointers.set(`${pointer}/inputs/${k}`, { node: seg.head.id, port: e.port });
      const from = graph.nodes.get(e.from);
      if (from.kind === 'input') {
        appearance.push(from);
        return byIndex ? -1 : names.get(from.id);
      }
      return indexOf.get(segmentOf.get(from.id));
    });
    const sequence = seg.steps.map((n, j) => {
      const p = `${pointer}/sequence/${j}`;
      pointers.set(p, { node: n.id });
      for (const field of ['operation', 'version', 'versionId']) pointers.set(`${p}/${field}`, { node: n.id, field });
      pointers.set(`${p}/config`, { node: n.id });
      const step = {};
      if (n.ref.versionId) step.versionId = n.ref.versionId;
      else Object.assign(step, { operation: n.ref.operation, version: n.ref.version });
      const config = n.ref.config ?? {};
      for (const k of Object.keys(config)) pointers.set(`${p}/config/${k}`, { node: n.id, key: k });
      if (n.ref.hasConfig || Object.keys(config).length) step.config = { ...config };
      return step;
    });
    return { inputs: segInputs, sequence };
  });
  // Ports left open, in the canvas' words (the validator would name a
  // segment's JSON), each with the pointer of what it makes wrong.
  for (const n of ops) {
    const m = resolve(registry, n.ref)?.manifest;
    if (!m) continue;
    const connected = new Set(incoming(graph, n.id).map((e) => e.port));
    const segment = segmentOf.has(n.id) ? `/segments/${indexOf.get(segmentOf.get(n.id))}/inputs` : '';
    const pointer = segments.some((seg) => seg.head.id === n.id) ? segment : '';
    if (isFlow(m)) {
      if (!connected.size) problems.push({ node: n.id, port: 0, pointer, message: `${n.ref.operation} has nothing connected to it: connect one or more steps' outputs (or external inputs) to its input` });
      continue;
    }
    for (let port = 0; port < m.inputs.length; port++) {
      if (connected.has(port)) continue;
      problems.push({ node: n.id, port, pointer, message: `${describePort(graph, n, port, registry)}, a ${m.inputs[port]}, is not connected: connect an external input or another step's output of that type to it` });
    }
  }
  const slots = byIndex ? appearance : inputs;
  slots.forEach((n, k) => pointers.set(`/inputs/${k}`, { node: n.id }));
  for (const field of ['name', 'version', 'description', 'groups']) pointers.set(`/${field}`, { field });
  const m = graph.meta;
  const manifest = { name: m.name, version: m.version, description: m.description };
  if (m.hasGroups || m.groups.length) manifest.groups = [...m.groups];
  const named = slots.map((n) => n.name).filter(Boolean);
  if (!byIndex ? inputs.length : named.length) manifest.inputs = slots.map((n) => names.get(n.id));
  manifest.segments = manifestSegments;
  return { manifest, pointers, problems };
}

/** The graph element a diagnostic's pointer names: the longest prefix known. */
export function locate(pointers, pointer) {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf('/'))) {
    if (pointers.has(p)) return pointers.get(p);
    if (!p) return {};
  }
}

/**
 * The graph a manifest stands for, laid out: inputs on the left, each
 * operation right of what feeds it, the output on the right. Reads what
 * `toManifest` writes and any manifest a person wrote; an operation the
 * registry lacks is kept (the validator says so).
 */
export function fromManifest(manifest) {
  const graph = emptyGraph();
  let order = 0;
  const add = (node) => { const id = `n${++order}`; graph.nodes.set(id, { id, order, ...node }); return id; };
  graph.meta = {
    name: String(manifest.name ?? ''),
    version: String(manifest.version ?? ''),
    description: String(manifest.description ?? ''),
    groups: Array.isArray(manifest.groups) ? [...manifest.groups] : [],
    hasGroups: Array.isArray(manifest.groups),
    style: 'name',
  };
  const segments = Array.isArray(manifest.segments) ? manifest.segments : [];
  const refs = segments.flatMap((s) => (Array.isArray(s?.inputs) ? s.inputs : []));
  const names = Array.isArray(manifest.inputs) ? manifest.inputs.map(String) : [];
  const inputNodes = new Map();
  if (refs.some((r) => typeof r === 'string')) {
    names.forEach((name, slot) => inputNodes.set(name, add({ kind: 'input', name, slot })));
  } else {
    graph.meta.style = 'index';
  }
  let nextSlot = 0;
  const lastOf = [];
  segments.forEach((segment, i) => {
    const sequence = Array.isArray(segment?.sequence) ? segment.sequence : [];
    let prev = null;
    sequence.forEach((step, j) => {
      const ref = {
        operation: step?.operation,
        version: step?.version,
        versionId: step?.versionId,
        config: step?.config && typeof step.config === 'object' ? { ...step.config } : {},
        hasConfig: step?.config !== undefined,
      };
      const id = add({ kind: 'op', ref, at: { segment: i, position: j } });
      if (j === 0) {
        (Array.isArray(segment.inputs) ? segment.inputs : []).forEach((r, port) => {
          let from;
          if (r === -1) {
            const slot = nextSlot++;
            from = add({ kind: 'input', name: names[slot] ?? '', slot });
          } else if (typeof r === 'string') {
            from = inputNodes.get(r) ?? add({ kind: 'input', name: r, slot: Infinity });
            inputNodes.set(r, from);
          } else {
            from = lastOf[r];
          }
          if (from) graph.edges.push({ from, to: id, port });
        });
      } else if (prev) {
        graph.edges.push({ from: prev, to: id, port: 0 });
      }
      prev = id;
    });
    lastOf.push(prev);
  });
  const out = add({ kind: 'output' });
  if (lastOf.at(-1)) graph.edges.push({ from: lastOf.at(-1), to: out, port: 0 });
  return graph;
}

/** Positions for every node: columns by depth (inputs first, the output last), rows in the order the manifest reads; `height(node)`: how tall it draws (else an estimate). */
export function layout(graph, registry, { dx = 270, dy = 30, height = (n) => nodeHeight(graph, n, registry) } = {}) {
  const depth = new Map();
  const visit = (id, stack = new Set()) => {
    if (depth.has(id)) return depth.get(id);
    if (stack.has(id)) return 0;
    stack.add(id);
    const d = incoming(graph, id).reduce((m, e) => Math.max(m, visit(e.from, stack) + 1), 0);
    depth.set(id, d);
    return d;
  };
  for (const id of graph.nodes.keys()) visit(id);
  const maxDepth = Math.max(0, ...[...graph.nodes.values()].filter((n) => n.kind !== 'output').map((n) => depth.get(n.id)));
  for (const n of graph.nodes.values()) if (n.kind === 'output') depth.set(n.id, maxDepth + 1);
  const columns = new Map();
  for (const n of [...graph.nodes.values()].sort((a, b) => a.order - b.order)) {
    const d = depth.get(n.id);
    if (!columns.has(d)) columns.set(d, []);
    columns.get(d).push(n);
  }
  const positions = new Map();
  for (const [d, nodes] of columns) {
    let y = 0;
    for (const n of nodes) {
      positions.set(n.id, { x: d * dx, y });
      y += height(n) + dy;
    }
  }
  return positions;
}

/** About how tall a node draws: its title, ports and config fields. */
export function nodeHeight(graph, node, registry) {
  if (node.kind !== 'op') return 110;
  const m = resolve(registry, node.ref)?.manifest;
  return 90 + 36 * portCount(graph, node, registry) + 56 * (Object.keys(m?.config ?? {}).length + 1);
}

/** The manifest as a file: two-space JSON and a newline. */
export function manifestText(manifest) {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
