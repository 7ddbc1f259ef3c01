// The canvas: Rete.js (nodes, connections, zoom and pan, selection, undo)
// drawn by its Lit renderer, holding the workflow's graph. Each Rete node
// carries its model node (`node.braid`: kind, name, ref, where it was
// opened); `snapshot()` reads the model's graph back (model.js). Ports are
// refused while a connection is dragged, with the reason, by the model's
// type rules; diagnostics are drawn on the node, port or field they name.
import { NodeEditor, ClassicPreset } from 'rete';
import { AreaPlugin, AreaExtensions } from 'rete-area-plugin';
import { ConnectionPlugin, ClassicFlow } from 'rete-connection-plugin';
import { LitPlugin, Presets } from '@retejs/lit-plugin';
import { HistoryPlugin, Presets as HistoryPresets } from 'rete-history-plugin';
import { html, LitElement, css } from 'lit';
import { canConnect, caret, isFlow, layout, outputType, portCount, portLabel, resolve } from './model.js';

const socket = new ClassicPreset.Socket('value');
/** Every socket drawn, to mark while a connection is dragged. */
const sockets = new Set();
/** Diagnostics on input ports, `<node id>/<port>` -> message: read when a socket draws, so a redrawn one keeps its mark. */
const portErrors = new Map();

/** A port: drawn by the canvas library where it expects a socket; marked `fits` or `refused` (with the reason) while dragging, `error` by a diagnostic. */
class BraidSocket extends LitElement {
  static properties = { side: {}, nodeId: {}, key: {}, state: {}, reason: {} };
  static styles = css`
    :host { display: inline-block; }
    div { width: 18px; height: 18px; margin: 3px; border-radius: 50%; background: #5b8c5a; border: 2px solid #fff; box-sizing: border-box; cursor: crosshair; }
    div:hover { background: #7fbf7d; }
    .fits { background: #2ecc71; box-shadow: 0 0 0 3px #2ecc7188; }
    .refused { background: #999; opacity: 0.45; cursor: not-allowed; }
    .error { background: #d33; box-shadow: 0 0 0 3px #f5a3a3; }
  `;
  connectedCallback() { super.connectedCallback(); sockets.add(this); }
  disconnectedCallback() { super.disconnectedCallback(); sockets.delete(this); }
  render() {
    const error = this.side === 'input' ? portErrors.get(`${this.nodeId}/${this.key}`) : undefined;
    const cls = this.state || (error ? 'error' : '');
    return html`<div class=${cls} data-side=${this.side} data-key=${this.key} title=${this.reason ?? error ?? ''}></div>`;
  }
}
customElements.define('braid-socket', BraidSocket);

/** The largest image side a preview draws. */
const IMAGE_SIDE = 4096;
/** Whether `image` is `{ width, height, pixels }` with `pixels` its RGBA8 bytes, at most IMAGE_SIDE a side. */
const isImage = ({ width, height, pixels }) => Number.isInteger(width) && Number.isInteger(height)
  && width > 0 && height > 0 && width <= IMAGE_SIDE && height <= IMAGE_SIDE
  && pixels instanceof Uint8Array && pixels.length === width * height * 4;

/** A field on a node: a select (version, a config key), a text (an input's name), the node's diagnostics or its output's preview. */
class Field extends ClassicPreset.Control {
  constructor(kind, { label = '', key = '', options = [], value = '', onChange = () => {} } = {}) {
    super();
    Object.assign(this, { kind, label, key, options, value, onChange, error: '', messages: [] });
  }
}

class BraidField extends LitElement {
  static properties = { field: { attribute: false } };
  static styles = css`
    :host { display: block; font: 13px system-ui, sans-serif; color: #fff; }
    /* A node's problems hang below it: ports do not move as checks come and go. */
    :host([kind="note"]) { position: absolute; left: 0; right: 0; top: calc(100% + 4px); z-index: 2; }
    label { display: flex; gap: 6px; align-items: center; justify-content: space-between; }
    .key { flex: 0 1 auto; min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    select, input { flex: 0 0 58%; min-width: 0; font: inherit; padding: 2px 4px; border-radius: 4px; border: 1px solid #889; }
    .error select, .error input { outline: 2px solid #d33; background: #fee; }
    .msg { color: #ffd4d4; font-size: 12px; margin-top: 2px; }
    /* A step's output: one fixed-height box, so that nodes keep their size as previews come and go. */
    .preview { height: 40px; margin-top: 4px; padding: 2px 6px; box-sizing: border-box; border-radius: 4px; background: #1d2540; font: 12px ui-monospace, monospace; display: flex; gap: 6px; align-items: center; overflow: hidden; cursor: pointer; }
    .preview span { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; overflow-wrap: anywhere; }
    .preview canvas { height: 34px; image-rendering: pixelated; flex: none; }
    .preview.none { color: #8a93b8; cursor: default; }
    .preview.error { background: #5a1a1a; color: #ffd4d4; }
    .preview.skipped { color: #b8b08a; }
    .errors { background: #7a1f1f; border-radius: 4px; padding: 3px 6px; font-size: 12px; display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
  `;
  connectedCallback() { super.connectedCallback(); this.field.element = this; }
  updated() {
    // An image is drawn from its pixels (RGBA8), never decoded from a format;
    // what the runner's frame sent is checked first (its code is not ours).
    const image = this.field.kind === 'preview' ? this.field.result?.image : undefined;
    const el = this.renderRoot.querySelector('canvas');
    if (!image || !el || el.drawn === image || !isImage(image)) return;
    el.drawn = image;
    el.width = image.width;
    el.height = image.height;
    el.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(image.pixels.buffer, image.pixels.byteOffset, image.pixels.length), image.width, image.height), 0, 0);
  }
  render() {
    const f = this.field;
    const stop = (e) => e.stopPropagation();
    if (f.kind === 'preview') {
      const r = f.result;
      if (!r) return html`<div class="preview none" data-testid="node-preview" title="Sample inputs (Preview, on the right) show each step's output here">…</div>`;
      const state = 'summary' in r ? 'value' : 'error' in r ? 'error' : 'skipped';
      const text = state === 'value' ? r.summary : state === 'error' ? `⚠ ${r.error}` : `skipped: needs ${r.skippedNode ?? r.skipped}`;
      return html`<div class="preview ${state}" data-testid="node-preview" data-state=${state} title=${text} @pointerdown=${stop} @click=${() => f.onChange(r)}>${r.image && isImage(r.image) ? html`<canvas></canvas>` : null}<span>${text}</span></div>`;
    }
    if (f.kind === 'note') {
      // The first problem, three lines at most (the node must not grow over its neighbours); all of them on hover and in the list.
      if (!f.messages.length) return null;
      const more = f.messages.length > 1 ? ` (+${f.messages.length - 1} more)` : '';
      return html`<div class="errors" role="alert" data-testid="node-errors" title=${f.messages.join('\n')}>⚠ ${f.messages[0]}${more}</div>`;
    }
    const control = f.kind === 'text'
      ? html`<input data-field=${f.key} .value=${f.value} @pointerdown=${stop} @dblclick=${stop} @keydown=${stop} @change=${(e) => f.onChange(e.target.value)} />`
      : html`<select data-field=${f.key} @pointerdown=${stop} @dblclick=${stop} @change=${(e) => f.onChange(e.target.value)}>
          ${f.options.map(([value, text]) => html`<option value=${value} ?selected=${value === f.value}>${text}</option>`)}
        </select>`;
    return html`<div class=${f.error ? 'error' : ''}><label><span class="key" title=${f.label}>${f.label}</span>${control}</label>${f.error ? html`<div class="msg">${f.error}</div>` : null}</div>`;
  }
}
customElements.define('braid-field', BraidField);

const TITLES = { input: 'input', output: 'output' };

/** Room below a node for its problems (three lines at most, hung below it), so that they never cover the node under it. */
const PROBLEM_ROOM = 64;
/** The smallest zoom a workflow opens at: its text still readable. */
const READABLE = 0.75;

/** Node colours by kind, and a red frame for a node with diagnostics (`!important`: the element's own styles come later in the cascade). */
function nodeStyles(el) {
  const b = el.data?.braid;
  const colour = { input: '#2f6f8f', output: '#6b4f9c', op: '#3d4f7d' }[b?.kind] ?? '#3d4f7d';
  const error = el.data?.errors?.length ? 'border-color: #ff4d4d !important; box-shadow: 0 0 0 4px #ff4d4d88;' : '';
  return `:host { background: ${colour} !important; border-color: #1d2540 !important; --node-width: 220px; ${error} }
    :host(:hover) { filter: brightness(1.12); }
    :host(.selected) { background: #8a6d1d !important; border-color: #ffd92c !important; }
    .title { font-size: 15px; }`;
}

/**
 * The canvas in `container`. `registry()`: the operations; `changed()`:
 * called after every change of the graph; `say(text, kind)`: a status line;
 * `inspect(result)`: a step's preview clicked.
 */
export async function createCanvas(container, { registry, changed, say, inspect = () => {} }) {
  const editor = new NodeEditor();
  const area = new AreaPlugin(container);
  const connection = new ConnectionPlugin();
  const render = new LitPlugin();
  // One undo step per command: the actions of one (a node and its connections removed) come within
  // milliseconds of each other; `separate()` ends a step before each command.
  const history = new HistoryPlugin({ timing: 50 });
  let order = 0;
  let quiet = 0; // while > 0, changes are the canvas's own (loading, relabelling)

  const selector = AreaExtensions.selector();
  const selection = AreaExtensions.selectableNodes(area, selector, { accumulating: AreaExtensions.accumulateOnCtrl() });
  render.addPreset(Presets.classic.setup({
    customize: {
      socket: (data) => () => html`<braid-socket .side=${data.side} .nodeId=${data.nodeId} .key=${data.key}></braid-socket>`,
      control: (data) => () => html`<braid-field kind=${data.payload.kind} .field=${data.payload}></braid-field>`,
      node: (data) => ({ emit }) => html`<rete-node data-kind=${data.payload.braid.kind} data-label=${data.payload.label} data-node=${data.payload.id} .data=${data.payload} .emit=${emit} .styles=${nodeStyles}></rete-node>`,
    },
  }));
  connection.addPreset(() => new ClassicFlow());
  history.addPreset(HistoryPresets.classic.setup());
  editor.use(area);
  area.use(connection);
  area.use(render);
  area.use(history);
  AreaExtensions.simpleNodesOrder(area);

  /** The model's graph, read from the canvas. */
  function snapshot(meta) {
    const nodes = new Map(editor.getNodes().map((n) => [n.id, { id: n.id, ...n.braid }]));
    const edges = editor.getConnections().map((c) => ({ from: c.source, to: c.target, port: Number(c.targetInput) }));
    return { meta, nodes, edges };
  }

  // Connections: refused by the type rules, with the reason said.
  let meta = null;
  editor.addPipe((context) => {
    if (context.type === 'connectioncreate' && !quiet) {
      const c = context.data;
      const verdict = canConnect(snapshot(meta), c.source, c.target, Number(c.targetInput), registry());
      if (!verdict.ok) {
        say(`Refused: ${verdict.reason}`, 'error');
        return undefined;
      }
      // An input takes one connection: a new one replaces the old.
      for (const old of editor.getConnections().filter((o) => o.target === c.target && o.targetInput === c.targetInput)) {
        void editor.removeConnection(old.id);
      }
      if (verdict.note) say(verdict.note, 'info');
    }
    if (['connectioncreated', 'connectionremoved', 'nodecreated', 'noderemoved'].includes(context.type) && !quiet) {
      queueMicrotask(() => { relabel(); changed(); });
    }
    return context;
  });

  // While a connection is dragged, every port says whether it fits.
  let dragging = null;
  connection.addPipe((context) => {
    if (context.type === 'connectionpick') {
      const s = context.data.socket;
      dragging = s;
      const graph = snapshot(meta);
      let from = s.side === 'output' ? s.nodeId : null;
      if (s.side === 'input') {
        const existing = editor.getConnections().find((c) => c.target === s.nodeId && c.targetInput === s.key);
        if (existing) from = existing.source;
      }
      for (const el of sockets) {
        if (el.nodeId === s.nodeId && el.key === s.key && el.side === s.side) continue;
        let verdict;
        if (from && el.side === 'input') verdict = canConnect(graph, from, el.nodeId, Number(el.key), registry());
        else if (!from && el.side === 'output') verdict = canConnect(graph, el.nodeId, s.nodeId, Number(s.key), registry());
        else verdict = { ok: false, reason: from ? 'an output connects to an input' : 'an input connects to an output' };
        el.state = verdict.ok ? 'fits' : 'refused';
        el.reason = verdict.ok ? undefined : verdict.reason;
      }
      hover();
    }
    if (context.type === 'connectiondrop') {
      dragging = null;
      queueMicrotask(drawMarks);
      const target = context.data.socket;
      const refused = target && [...sockets].find((el) => el.nodeId === target.nodeId && el.key === target.key && el.side === target.side && el.state === 'refused');
      for (const el of sockets) { el.state = ''; el.reason = undefined; }
      if (refused && !context.data.created) say(`Refused: ${refused.reason}`, 'error');
      else if (!refused) say('');
    }
    return context;
  });
  // The reason, said as the pointer passes over a refused port (captured: the area stops its pointer
  // events), and once more when the marks are made (the pointer may have arrived first).
  let pointer = { x: 0, y: 0 };
  const hover = () => {
    if (!dragging) return;
    const el = socketAt(pointer.x, pointer.y);
    if (el?.state === 'refused') say(`Refused: ${el.reason}`, 'error');
    else if (el?.state === 'fits') say('Fits: release to connect', 'ok');
  };
  window.addEventListener('pointermove', (e) => {
    pointer = { x: e.clientX, y: e.clientY };
    hover();
  }, true);

  /** A Rete node for model node `data` (without id). */
  function makeNode(data) {
    const b = { order: ++order, ...data };
    const node = new ClassicPreset.Node(b.kind === 'op' ? b.ref.operation ?? b.ref.versionId : TITLES[b.kind]);
    node.braid = b;
    node.errors = [];
    node.note = new Field('note');
    if (b.kind === 'input') {
      node.addOutput('out', new ClassicPreset.Output(socket, 'value'));
      node.addControl('name', new Field('text', { label: 'name', key: 'name', value: b.name ?? '', onChange: (v) => { b.name = v.trim(); changed(); } }));
    } else if (b.kind === 'output') {
      node.addInput('0', new ClassicPreset.Input(socket, 'output'));
    } else {
      node.addOutput('out', new ClassicPreset.Output(socket, 'output'));
      node.preview = new Field('preview', { onChange: inspect });
      addOpFields(node);
    }
    node.addControl('note', node.note);
    return node;
  }

  function addOpFields(node) {
    const b = node.braid;
    const ops = registry().filter((op) => op.name === b.ref.operation);
    const op = resolve(registry(), b.ref);
    if (!b.ref.versionId) {
      const reqs = [...new Set(ops.map((o) => caret(o.version)))];
      const options = [...new Set([...reqs, ...ops.map((o) => o.version), b.ref.version])].filter(Boolean).map((v) => [v, v]);
      node.addControl('version', new Field('select', { label: 'version', key: 'version', options, value: b.ref.version, onChange: (v) => { b.ref.version = v; refresh(node); } }));
    }
    for (const [key, values] of Object.entries(op?.manifest?.config ?? {})) {
      const options = [['', `${values[0]} (default)`], ...values.map((v) => [v, v])];
      const given = b.ref.config?.[key];
      if (given !== undefined && !values.includes(given)) options.push([given, given]);
      node.addControl(`config:${key}`, new Field('select', {
        label: key, key, options, value: given ?? '',
        onChange: (v) => {
          if (v === '') delete b.ref.config[key];
          else b.ref.config[key] = v;
          changed();
        },
      }));
    }
    node.addControl('preview', node.preview);
  }

  /** Rebuilds an operation node's fields (its version changed: config keys may differ). */
  function refresh(node) {
    for (const key of Object.keys(node.controls)) if (key !== 'note') node.removeControl(key);
    node.removeControl('note');
    addOpFields(node);
    node.addControl('note', node.note);
    node.ports = undefined; // its fields changed: redraw it
    relabel();
    changed();
  }

  /** Port labels and counts from the types as they now are (a flow-control operation grows a port when its last is used). */
  function relabel() {
    const graph = snapshot(meta);
    quiet++;
    try {
      for (const node of editor.getNodes()) {
        const m = graph.nodes.get(node.id);
        if (m.kind === 'op') {
          const count = portCount(graph, m, registry());
          const flow = isFlow(resolve(registry(), m.ref)?.manifest);
          for (let p = Object.keys(node.inputs).length; p < count; p++) node.addInput(String(p), new ClassicPreset.Input(socket, ''));
          if (flow) {
            for (let p = Object.keys(node.inputs).length - 1; p >= count; p--) node.removeInput(String(p));
          }
          for (const [key, input] of Object.entries(node.inputs)) input.label = portLabel(graph, m, Number(key), registry());
        }
        if (node.outputs.out) node.outputs.out.label = outputType(graph, node.id, registry()) ?? (m.kind === 'input' ? 'any type' : '?');
        // Redrawn only when its ports changed: a redraw under a pointer about to drag would lose the drag.
        const ports = JSON.stringify([Object.entries(node.inputs).map(([k, i]) => [k, i.label]), node.outputs.out?.label]);
        if (node.ports === ports) continue;
        node.ports = ports;
        void area.update('node', node.id);
      }
    } finally {
      quiet--;
    }
  }

  let pending = null;
  function drawMarks() {
    const marks = pending;
    pending = null;
    if (!marks) return;
    for (const node of editor.getNodes()) {
      const m = marks.get(node.id) ?? { messages: [], ports: new Map(), fields: new Map() };
      const key = JSON.stringify([m.messages, [...m.ports], [...m.fields]]);
      if (node.marked === key) continue;
      node.marked = key;
      node.errors = [...m.messages, ...m.fields.values()];
      node.note.messages = m.messages;
      node.note.element?.requestUpdate();
      for (const control of Object.values(node.controls)) {
        if (control.kind !== 'select' && control.kind !== 'text') continue;
        control.error = m.fields.get(control.key) ?? '';
        control.element?.requestUpdate();
      }
      for (const key of Object.keys(node.inputs)) {
        const message = m.ports.get(Number(key));
        if (message) portErrors.set(`${node.id}/${key}`, message);
        else portErrors.delete(`${node.id}/${key}`);
      }
      for (const el of sockets) if (el.nodeId === node.id) el.requestUpdate();
      void area.update('node', node.id);
    }
  }

  /** A node's box in area coordinates (its drawn size, or a new node's usual one). */
  function box(id) {
    const view = area.nodeViews.get(id);
    const el = view?.element.firstElementChild;
    return { x: view?.position.x ?? 0, y: view?.position.y ?? 0, w: el?.offsetWidth || 220, h: el?.offsetHeight || 120 };
  }

  /**
   * Puts a node just added at `position`, or, where it would overlap
   * another, at the nearest free spot below it (then in the columns to its
   * right): a node added never hides another.
   */
  let settling = Promise.resolve();
  function settle(node, position) {
    // One at a time: each sees where the ones before it ended up.
    const done = settling.then(() => settleNow(node, position));
    settling = done.catch(() => {});
    return done;
  }

  async function settleNow(node, position) {
    await area.translate(node.id, position);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const own = box(node.id);
    const others = editor.getNodes().filter((n) => n.id !== node.id).map((n) => box(n.id));
    const GAP = 16;
    // Side by side with a gap, or one above the other with room for the problems that hang below.
    const clear = (x, y) => others.every((o) => x + own.w + GAP <= o.x || o.x + o.w + GAP <= x || y + own.h + PROBLEM_ROOM <= o.y || o.y + o.h + PROBLEM_ROOM <= y);
    for (let column = 0; column < 50; column++) {
      for (let row = 0; row < 50; row++) {
        const spot = { x: position.x + column * (own.w + GAP), y: position.y + row * 24 };
        if (clear(spot.x, spot.y)) {
          if (spot.x !== position.x || spot.y !== position.y) await area.translate(node.id, spot);
          return;
        }
      }
    }
  }

  async function addNode(data, position) {
    const node = makeNode(data);
    await editor.addNode(node);
    if (position) await settle(node, position);
    return node;
  }

  return {
    editor, area, history,
    get meta() { return meta; },
    set meta(m) { meta = m; },
    snapshot: () => snapshot(meta),
    addNode,
    /** Replaces the canvas with `graph` (from the model), laid out, and fits it in view. */
    async load(graph) {
      quiet++;
      try {
        await editor.clear();
        history.clear();
        portErrors.clear();
        meta = graph.meta;
        const ids = new Map();
        for (const n of [...graph.nodes.values()].sort((a, b) => a.order - b.order)) {
          const { id, order: _, ...data } = n;
          const node = makeNode(data);
          if (n.kind === 'op') {
            const count = portCount(graph, n, registry());
            for (let p = 0; p < count; p++) node.addInput(String(p), new ClassicPreset.Input(socket, ''));
          }
          await editor.addNode(node);
          ids.set(id, node.id);
        }
        for (const e of graph.edges) {
          await editor.addConnection(new ClassicPreset.Connection(editor.getNode(ids.get(e.from)), 'out', editor.getNode(ids.get(e.to)), String(e.port)));
        }
      } finally {
        quiet--;
      }
      relabel();
      await this.arrange();
      history.clear();
      changed();
    },
    /** Lays the nodes out again (model.layout) and fits them in view. */
    async arrange() {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const height = (n) => area.nodeViews.get(n.id)?.element.firstElementChild?.offsetHeight || 120;
      // Room under each node for its problems, which hang below it.
      const positions = layout(snapshot(meta), registry(), { height, dy: PROBLEM_ROOM });
      for (const [id, p] of positions) await area.translate(id, p);
      await AreaExtensions.zoomAt(area, editor.getNodes(), { scale: 0.92 });
      const { k } = area.area.transform;
      if (k > 1) await area.area.zoom(1, 0, 0);
      if (k < READABLE) {
        // Too large to fit readably: readable from its top-left corner, the rest a scroll away.
        await area.area.zoom(READABLE, 0, 0);
        const left = Math.min(...[...positions.values()].map((p) => p.x));
        const top = Math.min(...[...positions.values()].map((p) => p.y));
        await area.area.translate(24 - left * READABLE, 24 - top * READABLE);
      }
    },
    /** Adds operation `op` (registered) at `position`, with its ports. */
    async addOperation(op, position) {
      history.separate();
      const ref = { operation: op.name, version: caret(op.version), config: {}, hasConfig: false };
      const node = makeNode({ kind: 'op', ref });
      const m = op.manifest;
      for (let p = 0; p < (isFlow(m) ? 1 : m.inputs.length); p++) node.addInput(String(p), new ClassicPreset.Input(socket, ''));
      await editor.addNode(node);
      await settle(node, position);
      relabel();
      return node;
    },
    async removeNodes(ids) {
      history.separate();
      for (const id of ids) {
        for (const c of editor.getConnections().filter((c) => c.source === id || c.target === id)) await editor.removeConnection(c.id);
        await editor.removeNode(id);
      }
    },
    async duplicate(ids) {
      history.separate();
      const made = [];
      for (const id of ids) {
        const node = editor.getNode(id);
        const view = area.nodeViews.get(id);
        const { order: _, at: __, slot: ___, ...data } = structuredClone(node.braid);
        if (data.kind === 'output') continue;
        const copy = makeNode(data);
        for (const key of Object.keys(node.inputs)) if (!copy.inputs[key]) copy.addInput(key, new ClassicPreset.Input(socket, ''));
        await editor.addNode(copy);
        await area.translate(copy.id, { x: view.position.x + 40, y: view.position.y + 40 });
        made.push(copy.id);
      }
      // The copies are selected, as after a paste.
      for (const id of ids) selection.unselect(id);
      made.forEach((id, k) => selection.select(id, k > 0));
      relabel();
      return made;
    },
    selected: () => editor.getNodes().filter((n) => n.selected).map((n) => n.id),
    /** Resolves once every node added so far has its place. */
    settled: () => settling,
    /** Area coordinates of a point on screen. */
    toArea(clientX, clientY) {
      const rect = container.getBoundingClientRect();
      const { x, y, k } = area.area.transform;
      return { x: (clientX - rect.left - x) / k, y: (clientY - rect.top - y) / k };
    },
    /**
     * Draws diagnostics: `marks` maps node id -> { messages, ports: Map(port -> message), fields: Map(key ->
     * message) }. Kept until a connection being dragged is dropped: redrawing a node under the pointer
     * would lose the drag.
     */
    mark(marks) {
      pending = marks;
      if (!dragging) drawMarks();
    },
    /**
     * Shows each operation node's output: `results` maps node id -> a preview result (runner.js), none: cleared.
     * Resolves once every box is drawn.
     */
    preview(results) {
      const drawn = [];
      for (const node of editor.getNodes()) {
        if (!node.preview) continue;
        const result = results.get(node.id) ?? null;
        if (node.preview.result === result) continue;
        node.preview.result = result;
        const el = node.preview.element;
        if (el) {
          el.requestUpdate();
          drawn.push(el.updateComplete);
        }
      }
      return Promise.all(drawn);
    },
    relabel,
    selection,
  };
}

/** The port under a point, looking into shadow roots (each once: a root's hit list names hosts of other roots). */
function socketAt(x, y, root = document, seen = new Set()) {
  seen.add(root);
  for (const el of root.elementsFromPoint(x, y)) {
    if (el.tagName === 'BRAID-SOCKET') return el;
    if (el.shadowRoot && !seen.has(el.shadowRoot)) {
      const inner = socketAt(x, y, el.shadowRoot, seen);
      if (inner) return inner;
    }
  }
  return null;
}
