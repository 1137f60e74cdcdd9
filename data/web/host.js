// The Host tab of the `headroom serve` page (issue 29 item 4): a host file (YAML) of several
// servers sharing GPUs, posted as "host" to /api/plan or /api/tune, and the JSON of
// `headroom plan --host` / `tune --host --json` (src/host/host_report.cpp) drawn as the answer,
// a table of the servers in start order, and per GPU one stacked bar per moment of the timeline.
// Uses app.js's helpers ($, el, svg, api, fmtBytes, fmtInt, stageWords, showError, copyText).
'use strict';

// Two vLLM 0.8.5 servers at 0.5 on one H100 (tests/data/host/two-vllm.yaml): the second is refused.
const HOST_EXAMPLE = `gpus: [h100]                # the host's GPUs by index, catalog names
servers:                    # in start order
  - name: chat
    gpus: [0]               # CUDA_VISIBLE_DEVICES of this server
    engine: vllm@0.8.5      # optional: the engine's version (else the newest rules)
    command: vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.5
  - name: small
    gpus: [0]
    engine: vllm@0.8.5
    command: vllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.5
`;
const OTHERS = 'other processes';  // the timeline's name for what nvidia-smi says is in use
const SERVER_PATTERNS = 8;         // pat-srv-0..7 in index.html; letters tell servers apart past that

const hostState = { seq: 0, verb: null, answer: null, ran: false };

// ---------------------------------------------------------------- request

// The text of the left form's "What is already on the GPUs" box, or null when empty.
function hostStateText() {
  const t = $('host-state').value;
  return t.trim() ? t : null;
}

function hostBody() {
  const body = { args: [], host: $('host-yaml').value };
  const hs = hostStateText();
  if (hs) body.host_state = hs;
  return body;
}

function setHostBusy(on) {
  $('host-busy').hidden = !on;
  $('host-result').setAttribute('aria-busy', on ? 'true' : 'false');
  for (const id of ['host-plan', 'host-tune']) $(id).disabled = on;
}

async function runHost(verb) {
  if (!$('host-yaml').value.trim()) { showHostError('the host file is empty'); return; }
  const seq = ++hostState.seq;
  hostState.ran = true;
  writeUrl(readForm());  // the link carries the host file (hostUrlValue)
  setHostBusy(true);
  try {
    const j = await api('/api/' + verb, hostBody());
    if (seq !== hostState.seq) return;
    showError(null);
    hostState.verb = verb;
    hostState.answer = j;
    renderHost(verb, j);
  } catch (err) {
    if (seq !== hostState.seq) return;
    hostState.answer = null;
    showHostError(err.message);
  } finally {
    if (seq === hostState.seq) setHostBusy(false);
  }
}

// An API error (400 {"error"}) shows in the page's banner, as the plan's errors do.
function showHostError(msg) {
  showError(msg);
  $('host-result').replaceChildren(el('div', { id: 'host-verdict', class: 'verdict', 'data-verdict': 'error' },
    el('span', { class: 'icon', 'aria-hidden': 'true', text: '?' }),
    el('span', { class: 'words' }, el('strong', { class: 'head', text: 'No host plan' }),
      el('span', { class: 'detail', text: ' see the problem above' }))));
}

// ---------------------------------------------------------------- who holds what

// The CLI's letter for a holder: 'o' for other processes, then 1..9, a..z for servers in order.
function holderLetter(i) { return i < 9 ? String(i + 1) : String.fromCharCode(97 + ((i - 9) % 26)); }

// name -> {letter, fill, label} for every holder of the plan, other processes first.
function holderKeys(plan) {
  const keys = new Map([[OTHERS, { letter: 'o', fill: 'url(#pat-held)', label: 'other processes' }]]);
  (plan.servers || []).forEach((s, i) => keys.set(s.name, {
    letter: holderLetter(i), fill: `url(#pat-srv-${i % SERVER_PATTERNS})`, label: s.name,
  }));
  return keys;
}

function swatch(fill, letter) {
  return svg('svg', { width: 24, height: 16, class: 'swatch', 'aria-hidden': 'true' },
    svg('rect', { width: 24, height: 16, fill, stroke: '#333', 'stroke-width': 1 }),
    letter ? svg('text', { x: 12, y: 12, class: 'seglabel', 'text-anchor': 'middle' }, letter) : null);
}

function hostLegend(keys, plan) {
  const held = (plan.gpus || []).some((g) => (g.timeline || []).some((m) => (m.held_bytes || {})[OTHERS] > 0));
  const lg = el('div', { class: 'legend', role: 'list', 'aria-label': 'legend' });
  for (const [name, k] of keys) {
    if (name === OTHERS && !held) continue;
    lg.append(el('span', { class: 'key', role: 'listitem' }, swatch(k.fill, k.letter), `${k.letter} ${k.label}`));
  }
  lg.append(el('span', { class: 'key', role: 'listitem' }, swatch('url(#pat-free)', '.'), '. free'));
  return lg;
}

// ---------------------------------------------------------------- answer first

// plan JSON -> {verdict, head, message, why}: how many start, and the first that does not.
function hostHeadline(plan) {
  const servers = plan.servers || [];
  const started = servers.filter((s) => s.verdict === 'fits' || s.verdict === 'at_risk').length;
  const down = servers.find((s) => !(s.verdict === 'fits' || s.verdict === 'at_risk'));
  let head = `${started} of ${servers.length} servers start`;
  if (down) head += ` — '${down.name}' does not (${down.verdict === 'refused' ? 'refused' : 'OOM'} at ${stageWords(down.failure ? down.failure.stage : 'start')})`;
  const risky = servers.some((s) => s.verdict === 'at_risk');
  return {
    verdict: down ? down.verdict : risky ? 'at_risk' : 'fits', head, down,
    message: down && down.failure ? down.failure.message : '', why: down ? down.why || '' : '',
  };
}

function hostVerdictBox(plan, prefix) {
  const h = hostHeadline(plan);
  if (prefix) h.head = prefix + h.head;
  const icon = h.down ? '✗' : h.verdict === 'at_risk' ? '!' : '✓';
  const detail = h.down ? '' : h.verdict === 'at_risk' ? ' Every server starts, some only if the estimates land well.' : ' Every server starts, in this order.';
  return el('div', { id: 'host-verdict', class: 'verdict', 'data-verdict': h.verdict },
    el('span', { class: 'icon', 'aria-hidden': 'true', text: icon }),
    el('span', { class: 'words' }, el('strong', { class: 'head', text: h.head }),
      detail ? el('span', { class: 'detail', text: detail }) : null,
      h.message ? el('span', { class: 'message', text: h.message }) : null,
      h.why ? el('span', { class: 'detail why' }, el('strong', { text: 'Why: ' }), h.why) : null));
}

// ---------------------------------------------------------------- servers table

const engineLabel = (s) => (!s.version || s.version === 'newest') ? `${s.engine} (newest)` : `${s.engine}@${s.version}`;

function verdictCell(s) {
  const words = { fits: '✓ fits', at_risk: '! at risk', refused: '✗ refused', oom: '✗ OOM' }[s.verdict] || s.verdict;
  const at = s.failure ? ` at ${stageWords(s.failure.stage)}` : '';
  return el('td', { class: s.failure ? 'bad' : '', text: words + at });
}

function holdsText(s) {
  const h = s.holds_bytes || [];
  if (!h.some((b) => b > 0)) return '—';
  return h.every((b) => b === h[0]) ? fmtBytes(h[0]) + (h.length > 1 ? ' on each GPU' : '') : h.map(fmtBytes).join(' + ');
}

function serverTable(plan, keys) {
  const tbl = el('table', { class: 'breakdown host-servers' }, el('caption', { class: 'muted', text: 'Servers in start order' }));
  tbl.append(el('tr', {}, ...['', 'server', 'engine', 'GPUs', 'verdict', 'KV tokens', 'holds'].map((h) => el('th', { scope: 'col', text: h }))));
  for (const s of plan.servers || []) {
    const k = keys.get(s.name);
    const started = s.verdict === 'fits' || s.verdict === 'at_risk';
    tbl.append(el('tr', { class: started ? '' : 'down' },
      el('td', {}, swatch(k.fill, k.letter)), el('th', { scope: 'row', text: s.name }),
      el('td', {}, el('code', { text: engineLabel(s) })), el('td', { text: (s.gpus || []).join(', ') }), verdictCell(s),
      el('td', { class: 'num', text: started ? fmtInt(s.kv_tokens) : '—' }), el('td', { class: 'num', text: holdsText(s) })));
  }
  return el('div', { class: 'scroll' }, tbl);
}

// ---------------------------------------------------------------- per-GPU timeline

// A moment's holders in drawing order: other processes, then the servers in start order.
function momentParts(m, keys) {
  const held = m.held_bytes || {};
  const names = [...keys.keys()].filter((n) => held[n] > 0);
  for (const n of Object.keys(held)) if (!names.includes(n) && held[n] > 0) names.push(n);
  return names.map((n) => ({ name: n, bytes: held[n], key: keys.get(n) || { letter: '?', fill: 'url(#pat-other)', label: n } }));
}

function momentLabel(m, plan) {
  if (m.after === 'start') return 'before any';
  const s = (plan.servers || []).find((x) => x.name === m.after);
  const down = s && !(s.verdict === 'fits' || s.verdict === 'at_risk');
  return `after ${m.after}` + (down ? ' ✗ did not start' : '');
}

// One part of a bar: a nested svg (it clips its label to the part), placed in percentages.
function barPart(x, w, fill, cls, title, text, dark) {
  const part = svg('svg', { x, y: 2, width: w, height: 26, class: cls });
  part.append(svg('rect', { width: '100%', height: '100%', fill, stroke: dark ? '#6b7280' : '#fff', 'stroke-dasharray': dark ? '4 3' : null },
    svg('title', {}, title)));
  if (text) part.append(svg('text', { x: dark ? 6 : 4, y: 18, class: dark ? 'seglabel dark' : 'seglabel' }, text));
  return part;
}

// One stacked bar, in percentages of the GPU's capacity (it scales with the page).
function momentBar(m, cap, keys, label) {
  const parts = momentParts(m, keys);
  const words = parts.map((p) => `${p.key.letter} ${p.key.label} ${fmtBytes(p.bytes)}`).join(', ');
  const s = svg('svg', { width: '100%', height: 30, class: 'moment-bar', role: 'img',
    'aria-label': `${label}: ${words || 'nothing held'}; ${fmtBytes(m.free_bytes)} free of ${fmtBytes(cap)}` });
  let pos = 0;
  const pct = (b) => `${(100 * b / cap).toFixed(3)}%`;
  for (const p of parts) {
    const part = barPart(pct(pos), pct(p.bytes), p.key.fill, 'seg', `${p.key.label} holds ${fmtBytes(p.bytes)}`,
      `${p.key.letter} ${p.key.label} ${fmtBytes(p.bytes)}`);
    part.dataset.holder = p.name;
    s.append(part);
    pos += p.bytes;
  }
  if (m.free_bytes > 0) {
    s.append(barPart(pct(pos), pct(Math.min(m.free_bytes, cap - pos)), 'url(#pat-free)', 'free', `free ${fmtBytes(m.free_bytes)}`,
      `free ${fmtBytes(m.free_bytes)}`, true));
  }
  return s;
}

function gpuTimeline(g, plan, keys) {
  const box = el('div', { class: 'host-gpu' }, el('h3', { text: `GPU ${g.index} ${g.gpu} (${fmtBytes(g.capacity_bytes)}), in start order` }));
  for (const m of g.timeline || []) {
    const label = momentLabel(m, plan);
    box.append(el('div', { class: 'moment' + (/✗/.test(label) ? ' down' : '') }, el('span', { class: 'moment-label', text: label }),
      momentBar(m, g.capacity_bytes, keys, `GPU ${g.index} ${label}`)));
  }
  return box;
}

// ---------------------------------------------------------------- tune, launch

function tuneSummary(j) {
  const box = el('div', { id: 'host-tune-verdict', class: 'verdict small', 'data-verdict': j.feasible ? 'fits' : 'oom' },
    el('span', { class: 'icon', 'aria-hidden': 'true', text: j.feasible ? '✓' : '✗' }),
    el('span', { class: 'words' }, el('strong', { class: 'head', text: j.feasible ? 'These settings let every server start, in this order' : 'No setting lets every server start' }),
      ...(j.notes || []).map((n) => el('span', { class: 'detail', text: n }))));
  const changes = j.changes || [];
  if (!changes.length) return [box];
  const tbl = el('table', { class: 'breakdown host-changes' }, el('caption', { class: 'muted', text: 'Changes, in start order' }),
    el('tr', {}, ...['server', 'flag', 'from', '', 'to'].map((h) => el('th', { scope: 'col', text: h }))));
  for (const c of changes) {
    const same = c.from !== '' && Number(c.from) === Number(c.to);  // 0.5 given is 0.50 kept
    tbl.append(el('tr', { class: same ? '' : 'changed' }, el('th', { scope: 'row', text: c.server }), el('td', {}, el('code', { text: c.flag })),
      el('td', { class: 'num', text: c.from || '(not set)' }), el('td', { 'aria-hidden': 'true', text: '→' }),
      el('td', { class: 'num' }, same ? `${c.to} (as given)` : el('strong', { text: c.to }))));
  }
  return [box, el('div', { class: 'scroll' }, tbl)];
}

function launchBlock(plan) {
  const text = (plan.servers || []).map((s) => s.launch_command).filter(Boolean).join('\n\n');
  if (!text) return [];
  const pre = el('pre', { id: 'host-launch', class: 'command', text });
  const copy = el('button', { type: 'button', id: 'copy-host-launch', class: 'secondary', 'aria-label': 'Copy the launch commands' }, 'Copy');
  copy.addEventListener('click', () => copyText(text, copy));
  return [el('h3', { text: 'Launch commands, in this order' }), el('div', { class: 'command-row' }, pre, copy)];
}

function renderHost(verb, j) {
  const plan = verb === 'tune' ? (j.plan || {}) : j;
  const keys = holderKeys(plan);
  const out = $('host-result');
  out.dataset.verb = verb;
  // Tune: its answer first (the settings), then the plan with them.
  out.replaceChildren(...(verb === 'tune' ? tuneSummary(j) : []), hostVerdictBox(plan, verb === 'tune' ? 'With them: ' : ''), serverTable(plan, keys),
    el('h3', { text: 'Who holds what on each GPU' }), hostLegend(keys, plan),
    ...(plan.gpus || []).map((g) => gpuTimeline(g, plan, keys)), ...launchBlock(plan));
}

// ---------------------------------------------------------------- wiring (called from app.js)

function hostWire(fromUrl) {
  $('host-yaml').value = fromUrl || HOST_EXAMPLE;
  $('host-plan').addEventListener('click', () => runHost('plan'));
  $('host-tune').addEventListener('click', () => runHost('tune'));
  $('copy-smi').addEventListener('click', (e) => copyText($('smi-command').textContent, e.currentTarget));
}

// The first time the tab shows, plan what the box holds so the tab is never empty.
function hostShown() {
  if (!hostState.ran) runHost('plan');
}

// The host file for the link, when it is not the example.
function hostUrlValue() {
  const v = $('host-yaml').value;
  return v === HOST_EXAMPLE ? '' : v;
}
