// The editor page: the palette of the service's operations, the canvas,
// the manifest checked by the service's validator as it changes (each
// diagnostic drawn where its pointer points), publishing with an API key,
// following the build, and running the built web package in a sandboxed
// frame (runner.js).
import { createCanvas } from './canvas.js';
import { emptyGraph, fromManifest, isFlow, locate, manifestText, newest, toManifest, versionsOf } from './model.js';

const $ = (id) => document.getElementById(id);
let registry = [];
let canvas;
let current = { manifest: null, pointers: new Map(), valid: null };
/** Where the manifest being edited is kept between visits. */
const DRAFT = 'braid.draft';

/** The status line under the canvas (hidden when `text` is empty). */
function say(text, kind = 'info') {
  const status = $('status');
  status.textContent = text;
  status.className = text ? kind : '';
}

async function api(path, init = {}) {
  const res = await fetch(path, init);
  const type = res.headers.get('content-type') ?? '';
  const body = type.includes('json') ? await res.json() : await res.arrayBuffer();
  return { res, body };
}

// ---- the palette ----

function signatureOf(m) {
  const ins = m.inputs.map((t, i) => (m.input_names?.[i] ? `${m.input_names[i]}: ${t}` : t));
  return `${isFlow(m) ? `${ins[0]}…` : ins.join(', ')} → ${m.output}`;
}

function renderPalette() {
  const query = $('search').value.trim().toLowerCase();
  const groups = new Map();
  // Operations only: a registered crate of value types has no output and is not placed.
  for (const op of newest(registry).filter((o) => o.manifest.output)) {
    const m = op.manifest;
    const text = `${op.name} ${m.description} ${m.inputs.join(' ')} ${m.output} ${m.groups.join(' ')}`.toLowerCase();
    if (query && !query.split(/\s+/).every((w) => text.includes(w))) continue;
    const group = m.groups[0] ?? 'OTHER';
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(op);
  }
  const list = $('operations');
  list.replaceChildren();
  for (const [group, ops] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const section = document.createElement('div');
    section.className = 'group';
    section.innerHTML = '<h3></h3>';
    section.querySelector('h3').textContent = group;
    for (const op of ops) {
      const item = document.createElement('button');
      item.className = 'palette-item';
      item.dataset.op = op.name;
      const m = op.manifest;
      const versions = versionsOf(registry, op.name).join(', ');
      const also = m.groups.slice(1);
      const config = Object.entries(m.config).map(([k, v]) => `${k}: ${v.join(' | ')}`).join('; ') + (also.length ? ` (also ${also.join(', ')})` : '');
      item.innerHTML = '<div class="name"></div><div class="types"></div><div class="desc"></div><div class="config"></div>';
      item.querySelector('.name').textContent = `${op.name} ${versions}`;
      item.querySelector('.types').textContent = signatureOf(m);
      item.querySelector('.desc').textContent = m.description;
      item.querySelector('.config').textContent = config;
      item.title = 'Click or press Enter to add it, or drag it onto the canvas';
      draggable(item, (position) => canvas.addOperation(op, position), () => op.name);
      section.append(item);
    }
    list.append(section);
  }
}

/** The canvas' centre in area coordinates, where a click or Enter adds (at the free spot nearest it). */
function centre() {
  const rect = $('canvas').getBoundingClientRect();
  return canvas.toArea(rect.left + rect.width / 2, rect.top + rect.height / 2);
}

/**
 * Drags from the palette with the pointer (a ghost follows it); dropped on the canvas, `add(position)`. A click
 * (released where it was pressed) or Enter adds at the centre.
 */
function draggable(item, add, label) {
  item.addEventListener('pointerdown', (down) => {
    if (down.button !== 0) return;
    down.preventDefault();
    const ghost = document.createElement('div');
    ghost.className = 'ghost';
    ghost.textContent = label();
    const place = (e) => { ghost.style.left = `${e.clientX + 8}px`; ghost.style.top = `${e.clientY + 8}px`; };
    place(down);
    document.body.append(ghost);
    const move = (e) => place(e);
    const up = async (e) => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      ghost.remove();
      const rect = $('canvas').getBoundingClientRect();
      if (e.clientX >= rect.left && e.clientX <= rect.right && e.clientY >= rect.top && e.clientY <= rect.bottom) {
        await add(canvas.toArea(e.clientX, e.clientY));
        changed();
      } else if (Math.hypot(e.clientX - down.clientX, e.clientY - down.clientY) < 5) {
        await add(centre());
        changed();
      }
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  });
  item.addEventListener('keydown', async (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    await add(centre());
    changed();
  });
}

// ---- checking ----

let timer;
let edits = 0;
/** The graph changed: check it soon (`data-checked` on the body says `pending` until the answer for it is drawn). */
function changed() {
  edits++;
  document.body.dataset.checked = 'pending';
  clearTimeout(timer);
  timer = setTimeout(check, 120);
}

async function check() {
  const seen = edits;
  const graph = canvas.snapshot();
  const { manifest, pointers, problems } = toManifest(graph, registry);
  current = { manifest, pointers, valid: null };
  if (document.activeElement !== $('json')) $('json').value = manifestText(manifest);
  // A draft survives a reload or a closed tab: the page opens it next time.
  localStorage.setItem(DRAFT, JSON.stringify(manifest));
  if (![...graph.nodes.values()].some((n) => n.kind === 'op')) {
    // Nothing to check yet: say how to begin rather than what an empty manifest lacks.
    showDiagnostics([], [], null);
    $('signature').textContent = 'Drag an operation from the palette onto the canvas to begin.';
    document.body.dataset.checked = 'done';
    return;
  }
  let diagnostics = [];
  let valid = null;
  try {
    const { res, body } = await api('/v1/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(manifest) });
    if (seen !== edits) return; // changed since: the next check draws
    if (res.ok) valid = body;
    else diagnostics = body.diagnostics ?? [{ pointer: '', message: body.detail ?? `the service answered ${res.status}` }];
  } catch (e) {
    if (seen !== edits) return; // changed since: the next check draws
    diagnostics = [{ pointer: '', message: `the service did not answer: ${e.message}` }];
  }
  current.valid = valid && !problems.length ? valid : null;
  showDiagnostics(diagnostics, problems, valid);
  document.body.dataset.checked = 'done';
}

function showDiagnostics(diagnostics, problems, valid) {
  const marks = new Map();
  const mark = (id) => {
    if (!marks.has(id)) marks.set(id, { messages: [], ports: new Map(), fields: new Map() });
    return marks.get(id);
  };
  const list = $('diagnostics');
  list.replaceChildren();
  for (const f of document.querySelectorAll('[data-meta]')) f.classList.remove('error');
  // The validator's findings that a problem of the graph already says in
  // its own words (an open port: the segment's inputs) are not listed twice.
  const said = (d) => problems.some((p) => p.pointer && (d.pointer === p.pointer || d.pointer.startsWith(`${p.pointer}/`)));
  const entries = [
    ...problems.map((p) => ({ message: p.message, at: { node: p.node, port: p.port }, pointer: p.pointer ?? '' })),
    ...diagnostics.filter((d) => !said(d)).map((d) => ({ message: [d.message, d.expected && `expected ${d.expected}`, d.found && `found ${d.found}`].filter(Boolean).join('; '), hint: d.hint, at: locate(current.pointers, d.pointer), pointer: d.pointer })),
  ];
  for (const { message, hint, at, pointer } of entries) {
    const text = hint ? `${message}. ${hint}` : message;
    if (at.node) {
      // On the field it names (a config key, the version), else on the node; a port's also on its socket.
      const m = mark(at.node);
      const field = at.key ?? (at.field && at.field !== 'operation' ? at.field : null);
      if (field) m.fields.set(field, text);
      else m.messages.push(text);
      if (at.port !== undefined) m.ports.set(at.port, text);
    }
    if (at.field && !at.node) document.querySelector(`[data-meta=${at.field}]`)?.classList.add('error');
    const li = document.createElement('li');
    li.dataset.pointer = pointer;
    li.innerHTML = '<span class="msg"></span> <span class="where"></span>';
    li.querySelector('.msg').textContent = text;
    li.querySelector('.where').textContent = pointer;
    if (at.node) li.addEventListener('click', () => canvas.selection.select(at.node, false));
    list.append(li);
  }
  canvas.mark(marks);
  const sig = $('signature');
  sig.classList.toggle('valid', Boolean(valid) && !problems.length);
  sig.textContent = valid ? valid.signature : entries.length ? `${entries.length} problem(s)` : '';
  $('targets').textContent = valid ? `builds for: ${valid.targets.join(', ')}` : '';
  renderTargets(valid);
  $('publish').disabled = !(valid && !problems.length);
}

// ---- files ----

async function open(manifest) {
  await canvas.load(fromManifest(manifest, registry));
  readMeta();
}

function readMeta() {
  for (const f of document.querySelectorAll('[data-meta]')) f.value = canvas.meta[f.dataset.meta] ?? '';
}

function save() {
  const { manifest } = toManifest(canvas.snapshot(), registry);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([manifestText(manifest)], { type: 'application/json' }));
  link.download = `${manifest.name || 'workflow'}.json`;
  link.hidden = true;
  // Clicked in the document (a detached link downloads nothing in some
  // browsers), its URL kept for a minute: a busy browser may start the
  // download well after the click.
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

async function openText(text) {
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch (e) {
    say(`Not JSON: ${e.message}`, 'error');
    return;
  }
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) {
    say('A manifest is a JSON object with "name", "version", "description" and "segments"', 'error');
    return;
  }
  await open(manifest);
  say(`Opened ${manifest.name ?? 'the manifest'}`, 'ok');
}

/** A new workflow: the output alone, at the bottom right, at full size. */
async function fresh() {
  const graph = emptyGraph();
  graph.nodes.set('o', { id: 'o', kind: 'output', order: 0 });
  await canvas.load(graph);
  const rect = $('canvas').getBoundingClientRect();
  await canvas.area.area.zoom(1, 0, 0);
  await canvas.area.area.translate(0, 0);
  const [output] = canvas.editor.getNodes();
  await canvas.area.translate(output.id, { x: Math.max(0, rect.width - 260), y: Math.max(0, rect.height - 160) });
  readMeta();
}

// ---- build and try ----

const ALL_TARGETS = { native: 'native', nostd: 'nostd', wasm: ['node', 'web', 'bundler', 'component'] };
function renderTargets(valid) {
  const box = $('build-targets');
  const allowed = valid ? valid.targets.flatMap((t) => ALL_TARGETS[t] ?? [t]) : [];
  const before = new Map([...box.querySelectorAll('input')].map((i) => [i.value, i.checked]));
  const key = allowed.join(',');
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.querySelectorAll('label').forEach((l) => l.remove());
  for (const t of allowed) {
    const label = document.createElement('label');
    label.innerHTML = '<input type="checkbox">';
    const input = label.querySelector('input');
    input.value = t;
    // The web package by default (the page runs it), else the first target the workflow allows.
    input.checked = before.get(t) ?? (allowed.includes('web') ? t === 'web' : t === allowed[0]);
    label.append(t);
    box.append(label);
  }
}

let built = null;
async function publish() {
  const key = $('api-key').value;
  localStorage.setItem('braid.apiKey', key);
  const targets = [...$('build-targets').querySelectorAll('input:checked')].map((i) => i.value);
  if (!targets.length) {
    $('job').textContent = 'Choose at least one target.';
    return;
  }
  const manifest = current.manifest;
  $('artifacts').replaceChildren();
  $('try').hidden = true;
  $('deploy').hidden = true;
  const job = $('job');
  job.textContent = 'submitting…';
  $('publish').disabled = true;
  try {
    const { res, body } = await api('/v1/workflows', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ manifest, targets }),
    });
    if (!res.ok) throw new Error(body.detail ?? `the service answered ${res.status}`);
    let state = body.state;
    while (body.job_id && state !== 'succeeded' && state !== 'failed') {
      await new Promise((r) => setTimeout(r, 700));
      const j = await api(`/v1/jobs/${body.job_id}`, { headers: { 'x-api-key': key } });
      state = j.body.state;
      job.textContent = `job ${body.job_id.slice(0, 8)}: ${state} ${j.body.progress ?? ''}`;
      if (state === 'failed') throw new Error(`the build failed: ${j.body.error ?? ''}\n${j.body.log_tail ?? ''}`);
    }
    const b = await api(`/v1/builds/${body.build_id}`);
    built = b.body;
    job.textContent = `built ${built.name} (${built.targets.join(', ')})`;
    job.dataset.state = 'succeeded';
    for (const a of built.artifacts) {
      const li = document.createElement('li');
      li.innerHTML = '<a></a> <span></span>';
      const link = li.querySelector('a');
      link.href = `/v1/artifacts/${a.cid}`;
      link.download = a.name;
      link.textContent = a.name;
      li.querySelector('span').textContent = `${(a.size / 1024).toFixed(1)} KB`;
      $('artifacts').append(li);
    }
    renderTry();
    renderDeploy();
  } catch (e) {
    job.textContent = e.message;
    job.dataset.state = 'failed';
  } finally {
    $('publish').disabled = false;
  }
}

// ---- Deploy as: a name that stays, pointed at this build (PUT /v1/deployments/{name}) ----

function renderDeploy() {
  const component = built?.artifacts.some((a) => a.name.endsWith('.component.wasm'));
  $('deploy').hidden = !built;
  $('deploy-button').disabled = !component;
  const field = $('deploy-name');
  // Names are DNS-label-like: the workflow's name with hyphens.
  if (!field.value && built) field.value = built.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  const shown = $('deployed');
  delete shown.dataset.state;
  shown.textContent = component ? '' : 'Build with the component target to deploy: a deployment runs the component.';
}

async function deploy() {
  const shown = $('deployed');
  delete shown.dataset.state;
  const name = $('deploy-name').value.trim();
  shown.textContent = 'deploying…';
  try {
    const { res, body } = await api(`/v1/deployments/${encodeURIComponent(name)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-api-key': $('api-key').value },
      body: JSON.stringify({ build_id: built.id }),
    });
    if (!res.ok) throw new Error(body.detail ?? `the service answered ${res.status}`);
    const moved = body.history?.length > 1 ? ` (version ${body.history.length}; the previous is a rollback away)` : '';
    shown.textContent = `${body.name ?? name} runs build ${built.id.slice(0, 16)}…${moved}: POST ${location.origin}${body.run}`;
    shown.dataset.state = 'succeeded';
  } catch (e) {
    shown.textContent = e.message;
    shown.dataset.state = 'failed';
  }
}

function renderTry() {
  const web = built?.artifacts.find((a) => a.name === 'pkg-web.tgz');
  $('try').hidden = !web;
  if (!web) return;
  renderHistory();
  const box = $('try-inputs');
  box.replaceChildren();
  for (const [slot, input] of (current.valid?.inputs ?? []).entries()) {
    const label = document.createElement('label');
    const name = input.name ?? `input ${slot}`;
    label.textContent = `${name}: ${input.type}`;
    if (input.type === 'Bytes') {
      const file = document.createElement('input');
      file.type = 'file';
      file.dataset.slot = slot;
      label.append(file);
    }
    const text = document.createElement('textarea');
    text.dataset.slot = slot;
    text.placeholder = input.type === 'Bytes' ? 'or text (UTF-8)' : input.type === 'String' ? 'text' : 'JSON';
    label.append(text);
    box.append(label);
  }
}

// The built package runs in a sandboxed frame (runner.js): its code, from operations anyone may have
// published, never runs with this page's origin, its API key or its access to the service.
let runner = null;
let sequence = 0;
function runnerFrame() {
  if (!runner) {
    const frame = document.createElement('iframe');
    frame.sandbox = 'allow-scripts';
    frame.src = '/editor/runner.html';
    frame.hidden = true;
    frame.title = 'workflow runner';
    const ready = new Promise((resolve) => {
      const on = (e) => {
        if (e.source === frame.contentWindow && e.data?.ready) {
          removeEventListener('message', on);
          resolve(frame);
        }
      };
      addEventListener('message', on);
    });
    document.body.append(frame);
    runner = ready;
  }
  return runner;
}

async function runIsolated(cid, bytes, inputs) {
  const frame = await runnerFrame();
  const id = ++sequence;
  return new Promise((resolve) => {
    const on = (e) => {
      if (e.source !== frame.contentWindow || e.data?.id !== id) return;
      removeEventListener('message', on);
      resolve(e.data);
    };
    addEventListener('message', on);
    frame.contentWindow.postMessage({ id, cid, bytes, inputs }, '*');
  });
}

const packages = new Map();
async function runInPage() {
  const out = $('output');
  out.className = 'mono';
  out.textContent = 'running…';
  delete out.dataset.done;
  try {
    const web = built.artifacts.find((a) => a.name === 'pkg-web.tgz');
    if (!packages.has(web.cid)) {
      const { res, body } = await api(`/v1/artifacts/${web.cid}`);
      if (!res.ok) throw new Error(`could not fetch the web package (${res.status})`);
      packages.set(web.cid, new Uint8Array(body));
    }
    const inputs = [];
    const described = [];
    for (const [slot, input] of (current.valid?.inputs ?? []).entries()) {
      const file = document.querySelector(`#try-inputs input[type=file][data-slot="${slot}"]`);
      const text = document.querySelector(`#try-inputs textarea[data-slot="${slot}"]`).value;
      const chosen = input.type === 'Bytes' ? file?.files[0] : undefined;
      if (chosen) inputs.push(new Uint8Array(await chosen.arrayBuffer()));
      else if (input.type === 'Bytes') inputs.push(new TextEncoder().encode(text));
      else if (input.type === 'String') inputs.push(text);
      else inputs.push(JSON.parse(text));
      described.push(`${input.name ?? `input ${slot}`}: ${chosen ? `${chosen.name} (${chosen.size} bytes)` : clip(text, 200)}`);
    }
    const answer = await runIsolated(web.cid, packages.get(web.cid), inputs);
    remember({ inputs: described, output: answer.output, error: answer.error, ms: answer.ms });
    if (answer.error !== undefined) throw new Error(answer.error);
    out.textContent = answer.output;
    out.dataset.ms = answer.ms.toFixed(3);
    out.dataset.done = 'true';
  } catch (e) {
    out.className = 'mono error';
    out.textContent = e.message;
    out.dataset.done = 'error';
  }
}

// ---- the run history: the last runs of each workflow (by name), kept in this browser ----

const RUNS = 20;
const clip = (text, n) => (text.length > n ? `${text.slice(0, n)}…` : text);
const runsKey = () => `braid.runs.${built?.name ?? ''}`;

function runs() {
  try {
    const list = JSON.parse(localStorage.getItem(runsKey()) ?? '[]');
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

function remember({ inputs, output, error, ms }) {
  const entry = { at: new Date().toISOString(), build: built.id, inputs, output: output === undefined ? undefined : clip(output, 4000), error, ms };
  const list = [entry, ...runs()].slice(0, RUNS);
  try {
    localStorage.setItem(runsKey(), JSON.stringify(list));
  } catch {
    // Storage full or refused: the history is this page's only.
  }
  renderHistory(list);
}

/** The runs, newest first: when, how long, what came out (expandable to the inputs and the whole output). Text only. */
function renderHistory(list = runs()) {
  const items = list.map((run) => {
    const li = document.createElement('li');
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    const when = new Date(run.at).toLocaleTimeString();
    const took = typeof run.ms === 'number' ? `${run.ms.toFixed(1)} ms` : '';
    summary.textContent = `${when} · ${took} · ${clip(run.error ?? run.output ?? '', 60)}`;
    if (run.error !== undefined) summary.className = 'error';
    const inputs = document.createElement('pre');
    inputs.textContent = (run.inputs ?? []).join('\n');
    const output = document.createElement('pre');
    output.textContent = run.error ?? run.output ?? '';
    details.append(summary, inputs, output);
    li.append(details);
    return li;
  });
  $('history').replaceChildren(...items);
}

// ---- start ----

async function start() {
  $('api-key').value = localStorage.getItem('braid.apiKey') ?? '';
  const { res, body } = await api('/v1/operations');
  if (!res.ok) {
    say(`Could not read the operations: ${body.detail ?? res.status}`, 'error');
    return;
  }
  registry = body;
  canvas = await createCanvas($('canvas'), { registry: () => registry, changed, say });
  renderPalette();
  $('search').addEventListener('input', renderPalette);
  draggable($('add-input'), (position) => canvas.addNode({ kind: 'input', name: '' }, position), () => 'external input');
  for (const f of document.querySelectorAll('[data-meta]')) {
    f.addEventListener('input', () => { canvas.meta[f.dataset.meta] = f.value; changed(); });
  }
  $('new').onclick = () => {
    const ops = canvas.editor.getNodes().some((n) => n.braid.kind === 'op');
    if (!ops || confirm('Start a new workflow? This one is not kept unless you saved it.')) void fresh();
  };
  $('open').onclick = () => $('open-file').click();
  $('open-file').onchange = async (e) => {
    const file = e.target.files[0];
    if (file) await openText(await file.text());
    e.target.value = '';
  };
  $('save').onclick = save;
  $('undo').onclick = () => canvas.history.undo();
  $('redo').onclick = () => canvas.history.redo();
  $('arrange').onclick = () => canvas.arrange();
  $('apply-json').onclick = () => openText($('json').value);
  $('publish').onclick = publish;
  $('run').onclick = runInPage;
  $('deploy-button').onclick = deploy;
  document.addEventListener('keydown', async (e) => {
    const typing = ['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement?.tagName) || e.composedPath().some((el) => ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
    const mod = e.ctrlKey || e.metaKey;
    if (mod && e.key.toLowerCase() === 's') { e.preventDefault(); save(); return; }
    if (typing) return;
    if (mod && e.key.toLowerCase() === 'z') { e.preventDefault(); await (e.shiftKey ? canvas.history.redo() : canvas.history.undo()); changed(); }
    else if (mod && e.key.toLowerCase() === 'y') { e.preventDefault(); await canvas.history.redo(); changed(); }
    else if (mod && e.key.toLowerCase() === 'd') { e.preventDefault(); await canvas.duplicate(canvas.selected()); changed(); }
    else if (e.key === 'Delete' || e.key === 'Backspace') { e.preventDefault(); await canvas.removeNodes(canvas.selected().filter((id) => canvas.editor.getNode(id).braid.kind !== 'output')); changed(); }
  });
  // Drop a manifest file anywhere to open it.
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', async (e) => {
    e.preventDefault();
    const file = e.dataTransfer?.files[0];
    if (file) await openText(await file.text());
  });
  // The draft of the last visit, if it has a step; else a new workflow.
  let draft = null;
  try {
    draft = JSON.parse(localStorage.getItem(DRAFT) ?? 'null');
  } catch {
    localStorage.removeItem(DRAFT);
  }
  if (draft?.segments?.length) await open(draft);
  else await fresh();
  window.braidEditor = { ready: true, open, manifest: () => toManifest(canvas.snapshot(), registry).manifest, canvas };
}

start().catch((e) => say(`The editor failed to start: ${e.message}`, 'error'));
