// The editor page: the palette of the service's operations, the canvas,
// the manifest checked by the service's validator as it changes (each
// diagnostic drawn where its pointer points), publishing with an API key,
// following the build, and running the built web package in a sandboxed
// frame (runner.js).
import { createCanvas } from './canvas.js';
import { emptyGraph, fromManifest, isFlow, locate, manifestText, newest, resolve, toManifest, versionsOf } from './model.js';
import { previewSteps } from './preview.js';

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
  outdated();
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
  try {
    localStorage.setItem(DRAFT, JSON.stringify(manifest));
  } catch {
    // Storage full or refused: the draft is this page's only.
  }
  if (![...graph.nodes.values()].some((n) => n.kind === 'op')) {
    // Nothing to check yet: say how to begin rather than what an empty manifest lacks.
    showDiagnostics([], [], null);
    $('signature').textContent = 'Drag an operation from the palette onto the canvas to begin.';
    renderSamples();
    schedulePreview();
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
  renderSamples();
  schedulePreview();
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
  await canvas.load(fromManifest(manifest));
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

/**
 * The build of `manifest` for `targets` (`GET /v1/builds/{id}`): submitted
 * with `key`, answered at once if it was built before, else its job
 * followed (`progress(text)` on each poll) until it ends.
 */
async function buildOf(manifest, targets, key, progress = () => {}) {
  const { res, body } = await api('/v1/workflows', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ manifest, targets }),
  });
  if (!res.ok) throw refused(res, body);
  let state = body.state;
  while (body.job_id && state !== 'succeeded' && state !== 'failed') {
    await new Promise((r) => setTimeout(r, 700));
    const j = await api(`/v1/jobs/${body.job_id}`, { headers: { 'x-api-key': key } });
    if (!j.res.ok) throw refused(j.res, j.body);
    state = j.body.state;
    progress(`job ${body.job_id.slice(0, 8)}: ${state} ${j.body.progress ?? ''}`);
    if (state === 'failed') throw Object.assign(new Error(`the build failed: ${j.body.error ?? ''}\n${j.body.log_tail ?? ''}`), { lasting: true });
  }
  const b = await api(`/v1/builds/${body.build_id}`);
  if (!b.res.ok) throw refused(b.res, b.body);
  return b.body;
}

/** The service's refusal as an error; `lasting` unless asking again may help (429, 5xx). */
function refused(res, body) {
  const error = new Error(body?.detail ?? `the service answered ${res.status}`);
  error.lasting = res.status < 500 && res.status !== 429;
  return error;
}

/** An artifact's bytes (`GET /v1/artifacts/{cid}`), kept for the page's life. */
const artifacts = new Map();
async function artifact(cid) {
  if (!artifacts.has(cid)) {
    artifacts.set(cid, api(`/v1/artifacts/${cid}`).then(({ res, body }) => {
      if (!res.ok) throw new Error(`could not fetch artifact ${cid} (${res.status})`);
      return new Uint8Array(body);
    }));
    artifacts.get(cid).catch(() => artifacts.delete(cid));
  }
  return artifacts.get(cid);
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
    built = await buildOf(manifest, targets, key, (text) => { job.textContent = text; });
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
  for (const [slot, input] of (current.valid?.inputs ?? []).entries()) box.append(inputField(input, slot).label);
}

/** The field of external input `slot`: a file (for Bytes) and a text. */
function inputField(input, slot) {
  const label = document.createElement('label');
  label.textContent = `${input.name ?? `input ${slot}`}: ${input.type}`;
  let file;
  if (input.type === 'Bytes') {
    file = document.createElement('input');
    file.type = 'file';
    file.dataset.slot = slot;
    label.append(file);
  }
  const text = document.createElement('textarea');
  text.dataset.slot = slot;
  text.placeholder = input.type === 'Bytes' ? 'or text (UTF-8)' : input.type === 'String' ? 'text' : 'JSON';
  label.append(text);
  return { label, file, text };
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

/** How long the runner may take to answer before it is stopped. */
const RUNNER_TIMEOUT_MS = 60_000;

/**
 * Sends `request` (runner.js says which) to the runner; its answer. A
 * runner that does not answer in time (a step that loops forever) is
 * removed with whatever it loaded, and the next request starts a fresh one.
 */
async function runIsolated(request) {
  const made = runnerFrame();
  const frame = await made;
  const id = ++sequence;
  return new Promise((resolve) => {
    const on = (e) => {
      if (e.source !== frame.contentWindow || e.data?.id !== id) return;
      clearTimeout(timeout);
      removeEventListener('message', on);
      resolve(e.data);
    };
    const timeout = setTimeout(() => {
      removeEventListener('message', on);
      frame.remove();
      if (runner === made) {
        runner = null;
        inRunner.clear();
      }
      resolve({ id, error: `the workflow did not answer within ${RUNNER_TIMEOUT_MS / 1000} s (a step that never ends?): it was stopped` });
    }, RUNNER_TIMEOUT_MS);
    addEventListener('message', on);
    frame.contentWindow.postMessage({ id, ...request }, '*');
  });
}

async function runInPage() {
  const out = $('output');
  out.className = 'mono';
  out.textContent = 'running…';
  delete out.dataset.done;
  try {
    const web = built.artifacts.find((a) => a.name === 'pkg-web.tgz');
    const bytes = await artifact(web.cid);
    const inputs = [];
    const described = [];
    for (const [slot, input] of (current.valid?.inputs ?? []).entries()) {
      const file = document.querySelector(`#try-inputs input[type=file][data-slot="${slot}"]`);
      const text = document.querySelector(`#try-inputs textarea[data-slot="${slot}"]`).value;
      const chosen = input.type === 'Bytes' ? file?.files[0] : undefined;
      inputs.push(inputValue(input.type, chosen ? new Uint8Array(await chosen.arrayBuffer()) : undefined, text));
      described.push(`${input.name ?? `input ${slot}`}: ${chosen ? `${chosen.name} (${chosen.size} bytes)` : clip(text, 200)}`);
    }
    const answer = await runIsolated({ cid: web.cid, bytes, inputs });
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

/** A list kept in local storage under `key` (empty if none, or not a list). */
function stored(key) {
  try {
    const list = JSON.parse(localStorage.getItem(key) ?? '[]');
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

const runs = () => stored(runsKey());

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

/** An input of type `type` from a file's bytes, else from text (UTF-8 for Bytes, JSON but for String). */
function inputValue(type, bytes, text) {
  if (bytes) return bytes;
  if (type === 'Bytes') return new TextEncoder().encode(text);
  if (type === 'String') return text;
  return JSON.parse(text);
}

// ---- previews: each step's output on its node, on sample inputs kept with the workflow ----
//
// Each step runs by its operation's own web package (a build of the
// operation alone, `--targets steps`, every configuration value compiled in
// and chosen per call: one build per operation version, shared by every
// workflow and user), in the sandboxed runner, one after the other
// (preview.js). So a change of the graph or of a configuration needs no
// build: the preview is drawn again within the time of a check and a run.

const SAMPLES = 'braid.samples.';
/** The largest file kept as a sample (local storage holds about 5 MB a site, as base64). */
const SAMPLE_BYTES = 2 * 1024 * 1024;
const samplesKey = () => `${SAMPLES}${current.manifest?.name || 'untitled'}`;

/**
 * The pinned sample inputs, by slot: `{ name, bytes: base64 }` (a file) or
 * `{ text }`; read from storage once per workflow name and kept, with each
 * file's bytes decoded once (`bytesOf`), as previews read them at every edit.
 */
let pinnedNow = null;
function samples() {
  const key = samplesKey();
  if (pinnedNow?.key !== key) pinnedNow = { key, list: stored(key), decoded: new Map() };
  return pinnedNow.list;
}
const bytesOf = (slot) => {
  samples();
  const { list, decoded } = pinnedNow;
  if (list[slot]?.bytes === undefined) return undefined;
  if (!decoded.has(slot)) decoded.set(slot, Uint8Array.from(atob(list[slot].bytes), (c) => c.charCodeAt(0)));
  return decoded.get(slot);
};

const toBase64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));

/** Pins `sample` as input `slot` of this workflow (in this browser), and previews. */
function pin(slot, sample) {
  const list = [...samples()];
  list[slot] = sample;
  try {
    localStorage.setItem(samplesKey(), JSON.stringify(list));
  } catch {
    say('This browser would not keep the sample (too large?): choose a smaller one', 'error');
    return;
  }
  pinnedNow = null;
  renderSamples(true);
  outdated();
  schedulePreview();
}

/** The sample form: one field per external input, showing what is pinned. */
function renderSamples(force = false) {
  const inputs = current.valid?.inputs ?? [];
  const box = $('sample-inputs');
  const key = `${samplesKey()}|${JSON.stringify(inputs)}`;
  if (!force && box.dataset.key === key) return;
  box.dataset.key = key;
  const pinned = samples();
  box.replaceChildren(...inputs.map((input, slot) => {
    const { label, file, text } = inputField(input, slot);
    if (file) {
      file.onchange = async () => {
        const chosen = file.files[0];
        if (chosen && chosen.size > SAMPLE_BYTES) say(`${chosen.name} is ${chosen.size} bytes: a sample is kept in this browser, so at most ${SAMPLE_BYTES / 1024 / 1024} MiB`, 'error');
        else if (chosen) pin(slot, { name: chosen.name, bytes: toBase64(new Uint8Array(await chosen.arrayBuffer())) });
      };
    }
    text.value = pinned[slot]?.text ?? '';
    text.onchange = () => pin(slot, { text: text.value });
    if (pinned[slot]?.bytes !== undefined) {
      const shown = document.createElement('small');
      shown.className = 'pinned';
      shown.textContent = `pinned: ${pinned[slot].name} (${bytesOf(slot).length} bytes)`;
      label.append(shown);
    }
    return label;
  }));
}

/** Each operation version's own web package: `name@version` -> Promise<{ cid, bytes }>. */
const stepPackages = new Map();

/**
 * A workflow of operation `op` alone: its build for `steps` has the
 * operation's package. A flow-control operation's inputs take their type
 * from what feeds them, so it is fed by `op_share` (Bytes, as they are),
 * which ships with every `braid`; its package, like the operation's, takes
 * any type.
 */
function alone(op) {
  const step = { operation: op.name, version: `=${op.version}` };
  const segments = isFlow(op.manifest)
    ? [{ inputs: [-1], sequence: [{ operation: 'op_share' }] }, { inputs: [0], sequence: [step] }]
    : [{ inputs: op.manifest.inputs.map(() => -1), sequence: [step] }];
  return { name: `step_${op.name}`, version: '0.1.0', description: `${op.name} ${op.version} alone, as the editor's previews run it`, segments };
}

function stepPackage(op, key, progress) {
  const id = `${op.name}@${op.version}`;
  if (!stepPackages.has(id)) {
    const made = (async () => {
      const build = await buildOf(alone(op), ['steps'], key, progress);
      const file = build.artifacts.find((a) => a.name === `steps-${op.name}.tgz`);
      if (!file) throw new Error(`the build of ${op.name} alone has no package steps-${op.name}.tgz`);
      return { cid: file.cid, bytes: await artifact(file.cid) };
    })();
    stepPackages.set(id, made);
    // A failure that asking again may mend is forgotten (the next change
    // tries again); a refusal or a failed build is kept until the key
    // changes, rather than asked for again at every edit.
    made.catch((e) => {
      if (!e.lasting) stepPackages.delete(id);
    });
  }
  return stepPackages.get(id);
}

/** Cids of the packages the runner has loaded (sent once). */
const inRunner = new Set();
let previewTimer;
let previewing = 0;
let changedAt = performance.now();

/** What the preview shows changed: one under way draws nothing; the next says how long after this it was drawn. */
function outdated() {
  clearTimeout(previewTimer);
  previewing++;
  changedAt = performance.now();
}

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => void preview(), 50);
}

/**
 * Runs `manifest` one step at a time on `externals` (what its `run`
 * takes), each step by its operation's own package, in the sandboxed
 * runner: `{ results, ms }` (runner.js says what a result is).
 * `progress(names)`: the operations whose packages are being built.
 */
async function runSteps(manifest, externals, key, progress = () => {}) {
  const steps = previewSteps(manifest);
  const packages = {};
  const waiting = new Set();
  await Promise.all(steps.map(async (entry) => {
    const op = resolve(registry, { operation: entry.step.operation, version: entry.step.version ?? '*' });
    if (!op) {
      entry.unavailable = `no version of ${entry.step.operation} matches ${entry.step.version}`;
      return;
    }
    entry.flow = isFlow(op.manifest);
    waiting.add(op.name);
    try {
      const { cid, bytes } = await stepPackage(op, key, () => progress([...waiting]));
      entry.package = cid;
      if (!inRunner.has(cid)) packages[cid] = bytes;
    } catch (e) {
      entry.unavailable = `${op.name}'s package: ${e.message}`;
    } finally {
      waiting.delete(op.name);
    }
  }));
  const answer = await runIsolated({ preview: { steps, externals, packages } });
  if (answer.error !== undefined) throw new Error(String(answer.error));
  for (const cid of Object.keys(packages)) inRunner.add(cid);
  // The frame's answer is data from code that is not ours: each result is
  // placed by the step it answers (by position), its texts made strings.
  const text = (v) => (v === undefined ? undefined : String(v));
  const results = steps.map(({ pointer }, i) => {
    const r = answer.results?.[i];
    if (r === null || typeof r !== 'object') return { pointer, error: 'the runner gave no result for this step' };
    if (r.summary !== undefined) return { pointer, summary: text(r.summary), full: text(r.full), image: r.image };
    if (r.skipped !== undefined) return { pointer, skipped: steps.find((s) => s.pointer === r.skipped)?.pointer ?? text(r.skipped) };
    return { pointer, error: text(r.error) };
  });
  return { results, ms: Number(answer.ms) };
}

/** Runs every step on the pinned samples and draws each output on its node. */
async function preview() {
  // The check of the graph as it is now schedules the next.
  if (document.body.dataset.checked === 'pending') return;
  const seq = ++previewing;
  const state = $('preview-state');
  const valid = current.valid;
  const pinned = samples();
  const stale = () => seq !== previewing;
  delete state.dataset.ms;
  if (!valid) {
    canvas.preview(new Map());
    state.textContent = 'A valid workflow is previewed: see Check above.';
    return;
  }
  if (valid.inputs.some((_, slot) => !pinned[slot])) {
    canvas.preview(new Map());
    state.textContent = 'Give every input a sample to see each step\'s output.';
    return;
  }
  const key = $('api-key').value;
  if (!key) {
    canvas.preview(new Map());
    state.textContent = 'Enter your API key (Build and try, below): the service builds each operation\'s package once.';
    return;
  }
  try {
    const externals = valid.inputs.map((input, slot) => inputValue(input.type, bytesOf(slot), pinned[slot].text ?? ''));
    const answer = await runSteps(current.manifest, externals, key, (waiting) => {
      if (!stale()) state.textContent = `building the packages of ${waiting.join(', ')} (once per operation version)…`;
    });
    if (stale()) return;
    const byNode = new Map();
    for (const result of answer.results) {
      const at = locate(current.pointers, result.pointer).node;
      if (result.skipped) result.skippedNode = canvas.editor.getNode(locate(current.pointers, result.skipped).node)?.label;
      if (at) byNode.set(at, result);
    }
    await canvas.preview(byNode);
    if (stale()) return;
    const ms = performance.now() - changedAt;
    state.textContent = `${answer.results.length} steps previewed, ${answer.ms.toFixed(1)} ms in the runner. Click a step's output for all of it.`;
    state.dataset.ms = ms.toFixed(0);
    state.dataset.drawn = String(seq);
  } catch (e) {
    if (stale()) return;
    canvas.preview(new Map());
    state.textContent = `The preview failed: ${e.message}`;
  }
}

/** A step's whole output, below the samples. */
function inspect(result) {
  const detail = $('preview-detail');
  detail.hidden = false;
  detail.textContent = result.full ?? result.error ?? `skipped: it needs ${result.skippedNode ?? result.skipped}, which failed`;
}

// ---- start ----

async function start() {
  $('api-key').value = localStorage.getItem('braid.apiKey') ?? '';
  $('api-key').addEventListener('change', () => {
    localStorage.setItem('braid.apiKey', $('api-key').value);
    stepPackages.clear();
    outdated();
    schedulePreview();
  });
  const { res, body } = await api('/v1/operations');
  if (!res.ok) {
    say(`Could not read the operations: ${body.detail ?? res.status}`, 'error');
    return;
  }
  registry = body;
  canvas = await createCanvas($('canvas'), { registry: () => registry, changed, say, inspect });
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
  $('clear-samples').onclick = () => {
    localStorage.removeItem(samplesKey());
    pinnedNow = null;
    renderSamples(true);
    outdated();
    schedulePreview();
  };
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
  window.braidEditor = {
    ready: true,
    open,
    manifest: () => toManifest(canvas.snapshot(), registry).manifest,
    canvas,
    /** What the previews run, on any manifest and inputs (as `run` takes them). */
    steps: (manifest, externals) => runSteps(manifest, externals, $('api-key').value),
  };
}

start().catch((e) => say(`The editor failed to start: ${e.message}`, 'error'));
