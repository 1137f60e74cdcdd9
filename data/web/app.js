// The page of `headroom serve`: turns the form into the CLI's own argument list, posts it to
// /api/plan|tune|doctor|diff, and draws the CLI's JSON (CONTRACT.md keys). State lives in the URL.
'use strict';

const $ = (id) => document.getElementById(id);
const GiB = 1024 ** 3, MiB = 1024 ** 2;

// Stage names of the plan JSON, in words.
const STAGE_WORDS = {
  init: 'CUDA / NCCL init', weights: 'weight loading', kv_pool: 'KV-cache allocation',
  workspaces: 'workspace allocation', cuda_graph: 'CUDA-graph capture', warmup: 'warm-up',
  runtime: 'serving (runtime peak)', none: 'none',
};
const PATTERN_STAGES = ['init', 'weights', 'kv_pool', 'workspaces', 'cuda_graph', 'runtime'];
const TABS = ['plan', 'tune', 'doctor', 'versions', 'host'];  // the Versions and Host tabs' views: versions.js, host.js

// The flags each engine exposes on the form (engine spelling); the others go in "Other flags".
const KEY_FLAGS = {
  sglang: [
    ['--mem-fraction-static', 'number', 'share of GPU memory for weights + KV cache'],
    ['--context-length', 'number', 'tokens per request'],
    ['--cuda-graph-max-bs', 'number', 'largest captured batch'],
    ['--max-running-requests', 'number', ''],
    ['--chunked-prefill-size', 'number', ''],
    ['--kv-cache-dtype', 'text', 'auto, fp8_e4m3, ...'],
    ['--page-size', 'number', ''],
    ['--max-total-tokens', 'number', ''],
    ['--disable-cuda-graph', 'bool', ''],
  ],
  vllm: [
    ['--gpu-memory-utilization', 'number', 'share of GPU memory vLLM may use'],
    ['--max-model-len', 'number', 'tokens per request'],
    ['--max-num-seqs', 'number', ''],
    ['--max-num-batched-tokens', 'number', ''],
    ['--kv-cache-dtype', 'text', 'auto, fp8, ...'],
    ['--block-size', 'number', ''],
    ['--kv-cache-memory-bytes', 'text', ''],
    ['--enforce-eager', 'bool', 'no CUDA graphs'],
  ],
  trtllm: [
    ['--kv_cache_free_gpu_memory_fraction', 'number', 'share of free memory for the KV cache'],
    ['--max_seq_len', 'number', ''],
    ['--max_batch_size', 'number', ''],
    ['--max_num_tokens', 'number', ''],
  ],
};
// The knob tune turns, per engine (for the chart's axis when the JSON does not name it).
const KNOBS = { sglang: '--mem-fraction-static', vllm: '--gpu-memory-utilization', trtllm: '--kv_cache_free_gpu_memory_fraction' };

const state = {
  tab: 'plan', meta: null, gpus: [], models: [],
  upload: null,          // {name, config, quant}
  plan: null, tune: null, doctor: null,
  seq: { plan: 0, tune: 0, doctor: 0 },
  selectedGroup: 0,
  planStale: false,      // the form changed while the Host tab showed
  hostFromUrl: '',       // the Host tab's file from the link
  versionsToFromUrl: '', // the Versions tab's "to" version from the link
};

// ---------------------------------------------------------------- formatting

function fmtBytes(b) {
  if (b === null || b === undefined || Number.isNaN(b)) return '—';
  const a = Math.abs(b);
  if (a >= GiB) return (b / GiB).toFixed(2) + ' GiB';
  if (a >= MiB) return (b / MiB).toFixed(a >= 100 * MiB ? 0 : 1) + ' MiB';
  if (a >= 1024) return (b / 1024).toFixed(0) + ' KiB';
  return b + ' B';
}
const fmtInt = (n) => (n === null || n === undefined) ? '—' : Number(n).toLocaleString('en-US');
const stageWords = (s) => STAGE_WORDS[s] || String(s || '').replace(/_/g, ' ');
const patternFor = (stage) => PATTERN_STAGES.includes(stage) ? stage : (stage === 'warmup' ? 'runtime' : 'other');

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
const SVGNS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, v);
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// ---------------------------------------------------------------- API

async function api(path, body) {
  const opt = body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  const res = await fetch(path, opt);
  let json = null;
  try { json = await res.json(); } catch (e) { /* not JSON: reported below */ }
  if (!res.ok) throw new Error((json && json.error) || `${path}: HTTP ${res.status}`);
  if (json === null) throw new Error(`${path}: the answer was not JSON`);
  return json;
}

// ---------------------------------------------------------------- form <-> args <-> URL

function flagInputId(flag) { return 'flag' + flag.replace(/[^a-zA-Z0-9]+/g, '-'); }

function buildFlagInputs() {
  const engine = $('engine').value;
  llamaFormShown(engine);
  const box = $('flags');
  const keep = {};
  for (const inp of box.querySelectorAll('input')) keep[inp.dataset.flag] = inp.type === 'checkbox' ? inp.checked : inp.value;
  box.replaceChildren();
  for (const [flag, kind, hint] of KEY_FLAGS[engine] || []) {
    const id = flagInputId(flag);
    if (kind === 'bool') {
      const inp = el('input', { type: 'checkbox', id, 'data-flag': flag, 'data-kind': kind });
      inp.checked = !!keep[flag];
      box.append(el('label', { class: 'check flag', for: id }, inp, ' ' + flag, hint ? el('span', { class: 'muted', text: ' — ' + hint }) : null));
    } else {
      const inp = el('input', {
        id, 'data-flag': flag, 'data-kind': kind, type: 'text', inputmode: kind === 'number' ? 'decimal' : null,
        spellcheck: 'false', placeholder: 'default',
      });
      inp.value = keep[flag] || '';
      box.append(el('label', { class: 'flag', for: id, title: hint || flag }, el('code', { text: flag }), inp,
        el('span', { class: 'inforce muted', id: id + '-inforce' })));
    }
  }
}

// Splits "--a 1 --b 'x y'" like a shell would (quotes only; no expansion).
function splitArgs(s) {
  const out = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m;
  while ((m = re.exec(s)) !== null) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

function readForm() {
  const f = {
    engine: $('engine').value, ver: $('engine-version').value.trim(),
    source: $('src-upload').checked ? 'upload' : 'catalog',
    model: $('model').value.trim(), gpu: $('gpu').value, mem: $('gpu-memory').value.trim(),
    gpus: $('gpus').value.trim(), tp: $('tp').value.trim(), pp: $('pp').value.trim(),
    ep: $('ep').value.trim(), dp: $('dp').value.trim(), dpa: $('dp-attention').checked,
    extra: $('extra').value.trim(), flags: {}, profile: $('profile').value,
    quant: $('quant').value.trim(), gpuMix: $('gpu-mix').value.trim(),
  };
  for (const inp of $('flags').querySelectorAll('input')) {
    if (inp.type === 'checkbox') { if (inp.checked) f.flags[inp.dataset.flag] = true; }
    else if (inp.value.trim() !== '') f.flags[inp.dataset.flag] = inp.value.trim();
  }
  return f;
}

// The CLI's arguments for the deployment on the form (without the verb and --json).
function deploymentArgs(f, { withModel = true } = {}) {
  const a = ['--engine', f.engine + (f.ver ? '@' + f.ver : '')];
  if (f.profile) a.push('--profile', f.profile);  // the host's calibrated terms (headroom calibrate)
  if (withModel && f.source === 'catalog' && f.model) a.push('--model', f.model);
  const llama = f.engine === 'llamacpp';  // llamacpp.js: a quant, cards of different kinds, no parallel sizes
  if (llama) a.push(...llamaArgs(f));
  const gpu = llama && f.gpuMix ? f.gpuMix : f.gpu;
  if (gpu) a.push('--gpu', gpu);
  if (f.mem) a.push('--gpu-memory', f.mem);
  for (const k of llama ? ['gpus'] : ['gpus', 'tp', 'pp', 'ep', 'dp']) if (f[k]) a.push('--' + k, f[k]);
  if (f.dpa && !llama) a.push('--enable-dp-attention');
  for (const [flag, v] of Object.entries(f.flags)) {
    if (v === true) a.push(flag);
    else a.push(flag, v);
  }
  if (f.extra) a.push(...splitArgs(f.extra));
  return a;
}

function requestBody(f, extraArgs = []) {
  const body = { args: deploymentArgs(f).concat(extraArgs) };
  if (f.source === 'upload' && state.upload) {
    body.config = state.upload.config;
    if (state.upload.quant) body.hf_quant_config = state.upload.quant;
  }
  return body;
}

// Plan and tune requests carry the "What is already on the GPUs" text when there is one.
function withHostState(body) {
  const hs = hostStateText();
  if (hs) body.host_state = hs;
  return body;
}

function hasModel(f) { return f.source === 'catalog' ? f.model !== '' : !!state.upload; }

function writeUrl(f) {
  const p = new URLSearchParams();
  p.set('tab', state.tab);
  p.set('engine', f.engine);
  if (f.ver) p.set('ver', f.ver);
  if (f.profile) p.set('profile', f.profile);
  if (f.source === 'catalog' && f.model) p.set('model', f.model);
  if (f.gpu) p.set('gpu', f.gpu);
  if (f.mem) p.set('gpu-memory', f.mem);
  if (f.engine === 'llamacpp' && f.quant) p.set('quant', f.quant);
  if (f.engine === 'llamacpp' && f.gpuMix) p.set('gpu-mix', f.gpuMix);
  for (const k of ['gpus', 'tp', 'pp', 'ep', 'dp']) if (f[k]) p.set(k, f[k]);
  if (f.dpa) p.set('dpa', '1');
  for (const [flag, v] of Object.entries(f.flags)) p.set(flag, v === true ? '1' : v);
  if (f.extra) p.set('extra', f.extra);
  const tc = $('target-context').value.trim(), tcc = $('target-concurrency').value.trim();
  if (tc) p.set('target-context', tc);
  if (tcc) p.set('target-concurrency', tcc);
  const hostFile = hostUrlValue();
  if (hostFile) p.set('hostfile', hostFile);
  const to = versionsUrlValue();
  if (to) p.set('to', to);
  history.replaceState(null, '', '?' + p.toString());
}

function readUrl() {
  const p = new URLSearchParams(location.search);
  if (p.get('engine') && KEY_FLAGS[p.get('engine')]) $('engine').value = p.get('engine');
  buildFlagInputs();
  $('engine-version').value = p.get('ver') || '';
  if (p.get('model')) $('model').value = p.get('model');
  if (p.get('gpu')) $('gpu').dataset.want = p.get('gpu');
  $('gpu-memory').value = p.get('gpu-memory') || '';
  $('quant').value = p.get('quant') || '';
  $('gpu-mix').value = p.get('gpu-mix') || '';
  for (const k of ['gpus', 'tp', 'pp', 'ep', 'dp']) $(k).value = p.get(k) || '';
  $('dp-attention').checked = p.get('dpa') === '1';
  $('extra').value = p.get('extra') || '';
  $('target-context').value = p.get('target-context') || '';
  $('target-concurrency').value = p.get('target-concurrency') || '';
  for (const inp of $('flags').querySelectorAll('input')) {
    const v = p.get(inp.dataset.flag);
    if (v === null) continue;
    if (inp.type === 'checkbox') inp.checked = v === '1';
    else inp.value = v;
  }
  state.hostFromUrl = p.get('hostfile') || '';
  state.versionsToFromUrl = p.get('to') || '';
  state.profileFromUrl = p.get('profile') || '';
  const tab = p.get('tab');
  if (TABS.includes(tab)) state.tab = tab;
}

// ---------------------------------------------------------------- errors, busy

function showError(msg) {
  const e = $('error');
  if (!msg) { e.hidden = true; e.textContent = ''; return; }
  e.hidden = false;
  e.replaceChildren(el('strong', { text: 'Problem: ' }), msg);
}

// ---------------------------------------------------------------- plan

let planTimer = null;
function schedulePlan() {
  clearTimeout(planTimer);
  planTimer = setTimeout(runPlan, 250);
}

async function runPlan() {
  const f = readForm();
  writeUrl(f);
  if (!hasModel(f)) {
    setVerdict($('verdict'), null);
    if (state.tab === 'versions') scheduleVersions();
    return;
  }
  const seq = ++state.seq.plan;
  $('busy').hidden = false;
  try {
    const j = await api('/api/plan', withHostState(requestBody(f)));
    if (seq !== state.seq.plan) return;
    showError(null);
    state.plan = j;
    renderPlan(j);
  } catch (err) {
    if (seq !== state.seq.plan) return;
    state.plan = null;
    clearPlan();
    showError(err.message);
    setVerdict($('verdict'), { verdict: 'error', message: '' });  // the message shows once, in the banner
  } finally {
    if (seq === state.seq.plan) $('busy').hidden = true;
  }
  if (state.tab === 'tune') scheduleTune();
  if (state.tab === 'versions') scheduleVersions();  // the plan first: the form's "Rules used" line is the "from" side's
}

// The verdict in words. j: a plan JSON (or {verdict:'error'}), null for "nothing yet".
function setVerdict(box, j) {
  box.replaceChildren();
  if (!j) {
    box.dataset.verdict = 'none';
    box.dataset.stage = '';
    box.append('Choose a model to see the forecast.');
    if (box.id === 'verdict') { $('mini-verdict').dataset.verdict = 'none'; $('mini-verdict').textContent = ''; }
    return;
  }
  const v = j.verdict;
  box.dataset.verdict = v;
  box.dataset.stage = j.failure ? j.failure.stage : '';
  const f = j.failure;
  let icon, head, detail = '';
  if (v === 'fits') {
    icon = '✓'; head = 'Fits';
    detail = `KV cache of ${fmtInt(j.kv_tokens)} tokens; ${fmtBytes(j.headroom_bytes)} left free per GPU at the peak.`;
  } else if (v === 'at_risk') {
    icon = '!'; head = 'At risk — fits only if the estimated parts land at the favourable end of their range';
    detail = `KV cache of ${fmtInt(j.kv_tokens)} tokens; ${fmtBytes(j.headroom_bytes)} left at the central estimate.`;
  } else if (v === 'oom') {
    icon = '✗'; head = `OOM at ${stageWords(f && f.stage)}`;
    if (f) detail = `GPU ${f.rank} asks for ${fmtBytes(f.request_bytes)} with ${fmtBytes(f.free_bytes)} free (short by ${fmtBytes(f.request_bytes - f.free_bytes)}).`;
  } else if (v === 'refused') {
    icon = '✗'; head = `Refused by the engine${f ? ' at ' + stageWords(f.stage) : ''}`;
  } else if (v === 'error') {
    icon = '?'; head = 'No forecast'; detail = j.message || '';
  } else {
    icon = '?'; head = String(v);
  }
  if (box.id === 'verdict') {
    // The verdict's headline also rides at the bottom of narrow screens, below the form.
    const mini = $('mini-verdict');
    mini.dataset.verdict = v;
    mini.textContent = `${icon} ${head}`;
  }
  box.append(el('span', { class: 'icon', 'aria-hidden': 'true', text: icon }),
    el('span', { class: 'words' }, el('strong', { class: 'head', text: head }),
      detail ? el('span', { class: 'detail', text: ' ' + detail }) : null,
      f && f.message ? el('span', { class: 'message', text: f.message }) : null));
}

function renderPlan(j) {
  setVerdict($('verdict'), j);
  const era = j.engine ? `${j.engine.name} ${j.engine.version || ''}` + (j.engine.era ? ` — ${j.engine.era}` : '') : '';
  $('engine-era').textContent = (era ? 'Rules used: ' + era : '') + (j.calibrated_host ? ` · calibrated (host ${j.calibrated_host})` : '');

  // Stats
  const st = $('stats');
  st.replaceChildren();
  const stat = (k, v, note) => st.append(el('div', { class: 'stat' }, el('dt', { text: k }), el('dd', { text: v }),
    note ? el('dd', { class: 'muted note', text: note }) : null));
  stat('KV capacity', j.kv_tokens ? fmtInt(j.kv_tokens) + ' tokens' : '—', 'min over GPUs');
  const conc = j.max_concurrency ? (j.max_concurrency >= 10 ? fmtInt(Math.floor(j.max_concurrency)) : Number(j.max_concurrency).toFixed(2)) : '—';
  stat('Requests at full context', conc, j.context_len ? `of ${fmtInt(j.context_len)} tokens each` : '');
  stat('Max running requests', j.max_running_requests ? fmtInt(j.max_running_requests) : '—', 'as the engine sets it');
  stat('Headroom', fmtBytes(j.headroom_bytes), 'free per GPU at the peak');

  // Flags in force (defaults shown) and every setting.
  const settings = j.settings || {};
  for (const inp of $('flags').querySelectorAll('input')) {
    const v = settings[inp.dataset.flag];
    const note = $(inpId(inp) + '-inforce');
    if (inp.type !== 'checkbox') inp.placeholder = v !== undefined ? String(v) : 'default';
    if (note) note.textContent = v !== undefined ? (inp.value ? `in force: ${v}` : 'default') : '';
  }
  const tbl = $('settings-table');
  tbl.replaceChildren(el('tr', {}, el('th', { text: 'flag' }), el('th', { text: 'value in force' })));
  for (const [k, v] of Object.entries(settings)) tbl.append(el('tr', {}, el('td', {}, el('code', { text: k })), el('td', { text: String(v) })));

  drawPlanBars(j);
  $('log').textContent = (j.log || []).join('\n') || '(no lines)';
  const notes = $('notes');
  notes.replaceChildren(...(j.notes || []).map((n) => el('li', { text: n })));
}
function inpId(inp) { return inp.id; }

// llama.cpp plans carry "devices": one bar per device (llamacpp.js); the others, one per GPU.
function drawPlanBars(j) {
  const devices = Array.isArray(j.devices) && j.devices.length > 0;
  $('bars-title').textContent = devices ? 'Memory per device' : 'Memory per GPU';
  if (devices) renderLlamaDevices(j);
  else { clearLlamaDevices(); renderBars(j); }
}

// After an error nothing of the previous forecast stays on screen.
function clearPlan() {
  $('engine-era').textContent = '';
  $('stats').replaceChildren();
  $('bars').replaceChildren();
  $('legend').replaceChildren();
  clearLlamaDevices();
  $('settings-table').replaceChildren();
  $('log').textContent = '';
  $('notes').replaceChildren();
}

// Ranks with the same stages and bytes are drawn once ("GPU 0–7").
function groupRanks(ranks, failure) {
  const groups = [];
  for (const r of ranks || []) {
    const sig = JSON.stringify([r.capacity_bytes, r.stages]) + (failure && failure.rank === r.rank ? '!' : '');
    const g = groups.find((x) => x.sig === sig);
    if (g) g.ranks.push(r.rank);
    else groups.push({ sig, ranks: [r.rank], rank: r });
  }
  return groups;
}
function rankLabel(list) {
  if (list.length === 1) return `GPU ${list[0]}`;
  const sorted = [...list].sort((a, b) => a - b);
  const contiguous = sorted.every((v, i) => i === 0 || v === sorted[i - 1] + 1);
  return contiguous ? `GPUs ${sorted[0]}–${sorted[sorted.length - 1]}` : `GPUs ${sorted.join(', ')}`;
}

// Segments of one rank's bar: per stage, its positive items, scaled so a stage's segments add
// up to what the stage really took (used after it minus used before). A stage that frees
// memory (a profiling peak released) takes it back from the latest segments.
function segmentsOf(rank) {
  const segs = [];
  let usedBefore = 0;
  for (const s of rank.stages || []) {
    const usedAfter = rank.capacity_bytes - s.free_bytes_after;
    const delta = usedAfter - usedBefore;
    const items = (s.items || []).filter((i) => i.bytes > 0);
    const sum = items.reduce((a, i) => a + i.bytes, 0);
    if (delta > 0) {
      if (items.length === 0 || sum <= 0) {
        segs.push({ stage: s.name, what: stageWords(s.name), bytes: delta, estimated: !!s.estimated });
      } else {
        const scale = delta / sum;
        for (const i of items) segs.push({ stage: s.name, what: i.what, bytes: i.bytes * scale, shown: i.bytes, estimated: !!i.estimated, range: i.range, held: isHeld(i) });
      }
    } else if (delta < 0) {
      let give = -delta;
      while (give > 0 && segs.length) {
        const last = segs[segs.length - 1];
        const take = Math.min(give, last.bytes);
        last.bytes -= take;
        give -= take;
        if (last.bytes <= 0) segs.pop();
      }
    }
    usedBefore = usedAfter;
  }
  return { segs, used: usedBefore };
}

// The memory other processes hold (--host-state): the first item of each rank, 'o' in the CLI.
const isHeld = (item) => /^held by other processes/.test(item.what || '');
const segFill = (seg) => seg.held ? 'url(#pat-held)' : `url(#pat-${patternFor(seg.stage)})`;

function renderLegend(stagesPresent, held) {
  const lg = $('legend');
  lg.replaceChildren();
  const sw = (fill, label, extra) => {
    const s = svg('svg', { width: 22, height: 14, class: 'swatch', 'aria-hidden': 'true' },
      svg('rect', { width: 22, height: 14, fill, stroke: '#333', 'stroke-width': 1 }),
      extra ? svg('rect', { width: 22, height: 14, fill: extra }) : null);
    lg.append(el('span', { class: 'key' }, s, label));
  };
  if (held) sw('url(#pat-held)', 'held by other processes (o)');
  for (const st of stagesPresent) sw(`url(#pat-${patternFor(st)})`, stageWords(st));
  sw('url(#pat-free)', 'free');
  sw('#8a8f96', 'estimated (hatched)', 'url(#pat-estimated)');
  sw('url(#pat-overflow)', 'does not fit');
}

function renderBars(j) {
  const box = $('bars');
  box.replaceChildren();
  const groups = groupRanks(j.ranks, j.failure);
  const present = [];
  for (const g of groups) for (const s of g.rank.stages || []) if (!present.includes(s.name)) present.push(s.name);
  const held = groups.some((g) => (g.rank.stages || []).some((s) => (s.items || []).some((i) => isHeld(i) && i.bytes > 0)));
  renderLegend(present, held);
  $('bars-note').textContent = groups.length && (j.ranks || []).length > groups.length ? '(identical GPUs drawn once)' : '';
  if (state.selectedGroup >= groups.length) state.selectedGroup = 0;
  const width = Math.max(300, box.clientWidth || 700);
  const barH = 34, top = 18, bottom = 22;
  groups.forEach((g, gi) => {
    const r = g.rank;
    const cap = r.capacity_bytes;
    const { segs } = segmentsOf(r);
    // The allocation that crosses the capacity is where the GPU runs out: it is drawn past the
    // capacity line (cross-hatched) and nothing after it, since the engine never gets there.
    let at = 0, cross = -1;
    for (let i = 0; i < segs.length; i++) {
      if (at + segs[i].bytes > cap + MiB) { cross = i; break; }
      at += segs[i].bytes;
    }
    const reached = cross >= 0 ? segs.slice(0, cross) : segs;
    const failSeg = cross >= 0 ? segs[cross] : null;
    const usedBefore = at;
    const short = failSeg ? usedBefore + failSeg.bytes - cap : 0;
    const total = Math.max(cap, usedBefore + (failSeg ? failSeg.bytes : 0));
    const left = 4, right = 4;
    const W = width - left - right;
    const x = (bytes) => left + (bytes / total) * W;
    const s = svg('svg', { width, height: top + barH + bottom, class: 'bar', role: 'img',
      'aria-label': `${rankLabel(g.ranks)}: ${fmtBytes(usedBefore)} used of ${fmtBytes(cap)}` + (failSeg ? `; ${failSeg.what} needs ${fmtBytes(failSeg.bytes)}, short by ${fmtBytes(short)}` : '') });
    const titled = (node, text) => { node.append(svg('title', {}, text)); return node; };
    const segText = (seg) => `${seg.what} — ${fmtBytes(seg.shown ?? seg.bytes)}` + (seg.estimated ? ' (estimated' + (seg.range ? `, ${fmtBytes(seg.range[0])}–${fmtBytes(seg.range[1])}` : '') + ')' : '') + ` · ${stageWords(seg.stage)}`;
    let pos = 0;
    for (const seg of reached) {
      const x0 = x(pos), w = Math.max(0.5, x(pos + seg.bytes) - x0);
      s.append(titled(svg('rect', { x: x0, y: top, width: w, height: barH, fill: segFill(seg), stroke: '#fff', 'stroke-width': 1, class: seg.held ? 'seg held' : 'seg', 'data-stage': seg.stage }), segText(seg)));
      if (seg.estimated) s.append(titled(svg('rect', { x: x0, y: top, width: w, height: barH, fill: 'url(#pat-estimated)', class: 'est' }), segText(seg)));
      if (w > 70) {
        const t = seg.what.length > 18 ? seg.what.slice(0, 17) + '…' : seg.what;
        s.append(svg('text', { x: x0 + 4, y: top + 14, class: 'seglabel' }, t));
        s.append(svg('text', { x: x0 + 4, y: top + 28, class: 'seglabel' }, fmtBytes(seg.shown ?? seg.bytes)));
      }
      pos += seg.bytes;
    }
    if (!failSeg && cap - pos > 0) {
      const x0 = x(pos), w = x(cap) - x0;
      s.append(titled(svg('rect', { x: x0, y: top, width: w, height: barH, fill: 'url(#pat-free)', stroke: '#6b7280', 'stroke-dasharray': '4 3', class: 'free' }), `free — ${fmtBytes(cap - pos)}`));
      if (w > 60) s.append(svg('text', { x: x0 + 4, y: top + 22, class: 'seglabel dark' }, `free ${fmtBytes(cap - pos)}`));
    }
    if (failSeg) {
      const x0 = x(pos), w = Math.max(3, x(pos + failSeg.bytes) - x0);
      s.append(titled(svg('rect', { x: x0, y: top - 6, width: w, height: barH + 12, fill: 'url(#pat-overflow)', stroke: '#7f1d1d', 'stroke-width': 1.5, class: 'overflow' }),
        `${segText(failSeg)}: ${fmtBytes(cap - pos)} free, short by ${fmtBytes(short)}`));
    }
    s.append(svg('line', { x1: x(cap), x2: x(cap), y1: 4, y2: top + barH + 6, stroke: '#111', 'stroke-width': 2 }));
    s.append(svg('text', { x: x(cap) - 4, y: 12, class: 'caplabel', 'text-anchor': 'end' }, `capacity ${fmtBytes(cap)}`));
    s.append(svg('text', { x: left, y: top + barH + 16, class: 'axislabel' }, failSeg
      ? `used ${fmtBytes(usedBefore)} · ${failSeg.what} (${stageWords(failSeg.stage)}) needs ${fmtBytes(failSeg.bytes)} · short by ${fmtBytes(short)}`
      : `used ${fmtBytes(pos)} · free ${fmtBytes(cap - pos)}`));

    const first = j.failure && g.ranks.includes(j.failure.rank);
    const mark = failSeg ? (first ? ' ✗ runs out here first' : ' ✗ would run out too') : '';
    const head = el('button', { type: 'button', class: 'rankhead' + (gi === state.selectedGroup ? ' selected' : ''), 'aria-pressed': gi === state.selectedGroup ? 'true' : 'false' },
      el('strong', { text: rankLabel(g.ranks) }), mark ? el('span', { class: 'bad', text: mark }) : null);
    head.addEventListener('click', () => { state.selectedGroup = gi; renderBars(state.plan); });
    box.append(el('div', { class: 'rank' + (failSeg ? ' failing' : '') }, head, s));
  });
  renderBreakdown(groups[state.selectedGroup], j.failure);
}

function renderBreakdown(g, failure) {
  const tbl = $('breakdown');
  tbl.replaceChildren();
  if (!g) return;
  $('breakdown-rank').textContent = `(${rankLabel(g.ranks)})`;
  tbl.append(el('tr', {}, ...['stage', 'what', 'bytes', 'kind', 'free after'].map((h) => el('th', { text: h }))));
  for (const s of g.rank.stages || []) {
    const items = s.items && s.items.length ? s.items : [{ what: '—', bytes: null }];
    items.forEach((i, k) => {
      const kind = i.bytes === null ? '' : i.estimated ? 'estimate' + (i.range ? ` (${fmtBytes(i.range[0])}–${fmtBytes(i.range[1])})` : '') : 'exact';
      tbl.append(el('tr', { class: (i.estimated ? 'estimated ' : '') + (k === 0 ? 'first' : '') },
        k === 0 ? el('td', { rowspan: items.length, class: 'stage', text: stageWords(s.name) }) : null,
        el('td', { text: i.what }), el('td', { class: 'num', text: i.bytes === null ? '' : fmtBytes(i.bytes) }),
        el('td', { text: kind }),
        k === 0 ? el('td', { rowspan: items.length, class: 'num', text: fmtBytes(s.free_bytes_after) + (s.free_bytes_after_worst !== undefined && s.free_bytes_after_worst !== s.free_bytes_after_best ? ` (${fmtBytes(s.free_bytes_after_worst)} … ${fmtBytes(s.free_bytes_after_best)})` : '') }) : null));
    });
  }
  if (failure && g.ranks.includes(failure.rank)) {
    tbl.append(el('tr', { class: 'failrow' }, el('td', { text: stageWords(failure.stage) }),
      el('td', { text: '✗ ' + (failure.message || 'allocation that does not fit') }),
      el('td', { class: 'num', text: fmtBytes(failure.request_bytes) }), el('td', { text: 'fails' }),
      el('td', { class: 'num', text: fmtBytes(failure.free_bytes) })));
  }
}

// ---------------------------------------------------------------- tune

let tuneTimer = null;
function scheduleTune() {
  clearTimeout(tuneTimer);
  tuneTimer = setTimeout(runTune, 300);
}

async function runTune() {
  const f = readForm();
  writeUrl(f);
  if (!hasModel(f)) return;
  if (!verbAvailable('tune')) {
    setVerdict($('tune-verdict'), { verdict: 'error', message: 'this build of headroom has no tune verb' });
    return;
  }
  const extra = [];
  const tc = $('target-context').value.trim(), tcc = $('target-concurrency').value.trim();
  if (tc) extra.push('--target-context', tc);
  if (tcc) extra.push('--target-concurrency', tcc);
  const seq = ++state.seq.tune;
  const box = $('tune-verdict');
  box.classList.add('pending');
  try {
    const j = await api('/api/tune', withHostState(requestBody(f, extra)));
    if (seq !== state.seq.tune) return;
    showError(null);
    state.tune = j;
    renderTune(j, f);
  } catch (err) {
    if (seq !== state.seq.tune) return;
    state.tune = null;
    $('tune-chart').replaceChildren();
    $('tune-table').replaceChildren();
    $('tune-alt-table').replaceChildren();
    $('launch').textContent = '';
    setVerdict(box, { verdict: 'error', message: err.message });
  } finally {
    box.classList.remove('pending');
  }
}

const normFlag = (k) => String(k).replace(/^-+/, '').replace(/_/g, '-').toLowerCase();

// tune JSON (src/advise/tune_report.cpp): "recommended", "forecast", "launch_command",
// "primary_knob" and "tradeoffs" rows {flag, value, label, verdict, safe, kv_tokens,
// concurrency, capture_free_worst_bytes, min_free_worst_bytes, limit, shortfall}.
function renderTune(j, f) {
  const rec = j.recommended || {};
  const box = $('tune-verdict');
  if (j.feasible === false || !j.forecast) {
    box.replaceChildren();
    box.dataset.verdict = 'oom';
    box.append(el('span', { class: 'icon', 'aria-hidden': 'true', text: '✗' }),
      el('span', { class: 'words' }, el('strong', { class: 'head', text: 'No safe setting' }),
        el('span', { class: 'detail', text: j.reason || '' })));
  } else {
    setVerdict(box, j.forecast);
  }
  const recText = Object.entries(rec).map(([k, v]) => `${k} ${v}`).join(' ');
  if (recText) (box.querySelector('.words') || box).append(el('span', { class: 'recommend', text: 'Recommended: ' + recText }));

  const rows = Array.isArray(j.tradeoffs) ? j.tradeoffs : [];
  const knob = j.primary_knob || (rows[0] && rows[0].flag) || KNOBS[f.engine] || 'value';
  $('tune-knob').textContent = rows.length ? `(${knob} → KV tokens and worst-case headroom)` : '';
  drawTradeoff(rows, knob, rec);
  const tbl = $('tune-table');
  tbl.replaceChildren();
  if (rows.length) {
    const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((c) => c !== 'flag');
    tbl.append(el('tr', {}, ...cols.map((c) => el('th', { text: c === 'value' ? knob : c.replace(/_/g, ' ') }))));
    for (const r of rows) {
      tbl.append(el('tr', { class: rowSafe(r) ? 'safe' : 'unsafe' },
        ...cols.map((c) => el('td', { class: typeof r[c] === 'number' ? 'num' : '', text: cellText(c, r[c]) }))));
    }
  }
  $('launch').textContent = j.launch_command || launchCommand(f, rec);
  renderAlternatives(Array.isArray(j.alternatives) ? j.alternatives : [], knob);
}

// The CLI's "other knobs" table: one change per row, the primary knob re-tuned, and whether the
// row serves the goal. A refused row carries no figures.
function renderAlternatives(rows, knob) {
  const tbl = $('tune-alt-table');
  tbl.replaceChildren();
  if (!rows.length) { tbl.append(el('tr', {}, el('td', { class: 'muted', text: 'No other knob changes the answer.' }))); return; }
  tbl.append(el('tr', {}, ...['other knobs', knob, 'KV tokens', 'requests', 'worst-case free', 'verdict', 'serves the goal?'].map((h) => el('th', { text: h }))));
  for (const r of rows) {
    const changes = Object.entries(r.changes || {}).map(([k, v]) => `${k} ${v}`).join(' ') || '(as given)';
    const refused = r.verdict === 'refused';
    tbl.append(el('tr', { class: rowSafe(r) ? 'safe' : 'unsafe' },
      el('td', {}, el('code', { text: changes })), el('td', { class: 'num', text: r.value }),
      el('td', { class: 'num', text: refused ? '—' : fmtInt(r.kv_tokens) }),
      el('td', { class: 'num', text: refused || r.concurrency == null ? '—' : Number(r.concurrency).toFixed(2) }),
      el('td', { class: 'num', text: refused ? '—' : fmtBytes(r.min_free_worst_bytes) }),
      el('td', { text: r.safe ? 'safe' : r.verdict }),
      el('td', { text: r.shortfall ? 'no: ' + r.shortfall : 'yes' })));
  }
}

function cellText(col, v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'object') return JSON.stringify(v);
  if (typeof v === 'number' && /bytes/.test(col)) return fmtBytes(v);
  if (typeof v === 'number' && /tokens/.test(col)) return fmtInt(v);
  if (typeof v === 'number' && !Number.isInteger(v)) return v.toFixed(2);
  return String(v);
}
function rowSafe(r) {
  if (typeof r.safe === 'boolean') return r.safe;
  return r.verdict === 'fits';
}
function tradeoffPoints(rows) {
  const num = (v) => (typeof v === 'number' ? v : null);
  return rows.map((r) => ({
    x: parseFloat(r.value), kv: num(r.kv_tokens),
    head: num(r.min_free_worst_bytes ?? r.capture_free_worst_bytes ?? r.headroom_bytes),
    safe: rowSafe(r), label: r.label || '', r,
  })).filter((p) => Number.isFinite(p.x)).sort((a, b) => a.x - b.x);
}

function drawTradeoff(rows, knob, rec) {
  const box = $('tune-chart');
  box.replaceChildren();
  const pts = tradeoffPoints(rows);
  if (!pts.length) { box.append(el('p', { class: 'muted', text: 'No trade-off rows.' })); return; }
  const width = Math.max(320, box.clientWidth || 640), height = 270;
  const m = { l: 64, r: 72, t: 30, b: 40 };
  const W = width - m.l - m.r, H = height - m.t - m.b;
  const xs = pts.map((p) => p.x);
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  const kvMax = Math.max(1, ...pts.map((p) => p.kv || 0));
  const heads = pts.map((p) => p.head).filter((v) => v !== null);
  const hMin = Math.min(0, ...heads), hMax = Math.max(1, ...heads);
  const X = (v) => m.l + (xmax === xmin ? W / 2 : ((v - xmin) / (xmax - xmin)) * W);
  const Y1 = (v) => m.t + H - (v / kvMax) * H;
  const Y2 = (v) => m.t + H - ((v - hMin) / (hMax - hMin)) * H;
  const s = svg('svg', { width, height, class: 'chart-svg', role: 'img', 'aria-label': `${knob} against KV tokens and worst-case headroom; shaded: safe settings` });
  // Safe region: shaded and hatched over the safe points (half-way to their neighbours).
  for (let i = 0; i < pts.length; i++) {
    if (!pts[i].safe) continue;
    const a = i === 0 ? X(pts[i].x) - 6 : (X(pts[i - 1].x) + X(pts[i].x)) / 2;
    const b = i === pts.length - 1 ? X(pts[i].x) + 6 : (X(pts[i].x) + X(pts[i + 1].x)) / 2;
    s.append(svg('rect', { x: a, y: m.t, width: Math.max(2, b - a), height: H, class: 'safe-band' }));
    s.append(svg('rect', { x: a, y: m.t, width: Math.max(2, b - a), height: H, class: 'safe-hatch' }));
  }
  s.append(svg('line', { x1: m.l, x2: m.l + W, y1: m.t + H, y2: m.t + H, class: 'axis' }));
  s.append(svg('line', { x1: m.l, x2: m.l, y1: m.t, y2: m.t + H, class: 'axis' }));
  s.append(svg('line', { x1: m.l + W, x2: m.l + W, y1: m.t, y2: m.t + H, class: 'axis' }));
  // Value ticks, skipping any that would overlap the last one drawn (the last always shows).
  let lastTick = -Infinity;
  pts.forEach((p, i) => {
    const tx = X(p.x), isLast = i === pts.length - 1;
    if (tx - lastTick < 40 && !(isLast && tx - lastTick >= 28)) return;
    s.append(svg('text', { x: tx, y: m.t + H + 16, class: 'tick', 'text-anchor': 'middle' }, p.r.value));
    lastTick = tx;
  });
  s.append(svg('text', { x: m.l + W / 2, y: height - 6, class: 'axislabel', 'text-anchor': 'middle' }, knob));
  for (const fr of [0, 0.5, 1]) {
    s.append(svg('text', { x: m.l - 6, y: Y1(kvMax * fr) + 4, class: 'tick', 'text-anchor': 'end' }, kvShort(kvMax * fr)));
    s.append(svg('text', { x: m.l + W + 6, y: Y2(hMin + (hMax - hMin) * fr) + 4, class: 'tick' }, fmtBytes(hMin + (hMax - hMin) * fr)));
  }
  s.append(svg('text', { x: 4, y: 14, class: 'axislabel' }, '● KV tokens'));
  s.append(svg('text', { x: width - 4, y: 14, class: 'axislabel', 'text-anchor': 'end' }, 'worst-case free ▲'));
  if (hMin < 0) s.append(svg('line', { x1: m.l, x2: m.l + W, y1: Y2(0), y2: Y2(0), class: 'zero' }));
  const kvPts = pts.filter((p) => p.kv !== null);
  const hPts = pts.filter((p) => p.head !== null);
  if (kvPts.length) s.append(svg('polyline', { points: kvPts.map((p) => `${X(p.x)},${Y1(p.kv)}`).join(' '), class: 'line-kv' }));
  if (hPts.length) s.append(svg('polyline', { points: hPts.map((p) => `${X(p.x)},${Y2(p.head)}`).join(' '), class: 'line-head' }));
  for (const p of kvPts) {
    s.append(svg('circle', { cx: X(p.x), cy: Y1(p.kv), r: 3.5, class: 'pt-kv' },
      svg('title', {}, `${knob} ${p.r.value}: ${fmtInt(p.kv)} KV tokens, ${p.safe ? 'safe' : 'not safe'}${p.label ? ' (' + p.label + ')' : ''}`)));
  }
  for (const p of hPts) {
    s.append(svg('path', { d: `M${X(p.x)},${Y2(p.head) - 4} l4,7 h-8 z`, class: 'pt-head' },
      svg('title', {}, `${knob} ${p.r.value}: worst-case free ${fmtBytes(p.head)}`)));
  }
  const recEntry = Object.entries(rec).find(([k]) => normFlag(k) === normFlag(knob));
  const recPt = pts.find((p) => p.label === 'recommended') || (recEntry ? { x: parseFloat(recEntry[1]), r: { value: recEntry[1] } } : null);
  if (recPt && Number.isFinite(recPt.x)) {
    const rx = X(recPt.x);
    s.append(svg('line', { x1: rx, x2: rx, y1: m.t, y2: m.t + H, class: 'rec' }));
    const right = rx > m.l + W * 0.7;
    s.append(svg('text', { x: right ? rx - 4 : rx + 4, y: m.t + 12, class: 'axislabel', 'text-anchor': right ? 'end' : 'start' }, `recommended ${recPt.r.value}`));
  }
  box.append(s, el('p', { class: 'legend-line muted' }, el('span', { class: 'safe-key' }, ' shaded = safe '),
    ' ● solid line: KV tokens · ▲ dashed line: worst-case free memory (min over stages and GPUs)'));
}
function kvShort(v) { return v >= 1e6 ? (v / 1e6).toFixed(2) + 'M' : v >= 1e3 ? (v / 1e3).toFixed(0) + 'K' : v.toFixed(0); }

// The engine's own launch command for the deployment with the recommended flags.
function launchCommand(f, rec) {
  const model = f.source === 'catalog' ? f.model : '/path/to/model';
  const flags = {};
  for (const [k, v] of Object.entries(f.flags)) flags[k] = v;
  for (const [k, v] of Object.entries(rec)) flags[k] = v;
  const tp = f.tp || '1';
  let parts;
  if (f.engine === 'llamacpp') {
    parts = [`llama-server -m ${model}`];
  } else if (f.engine === 'vllm') {
    parts = [`vllm serve ${model}`, `--tensor-parallel-size ${tp}`];
    if (f.pp) parts.push(`--pipeline-parallel-size ${f.pp}`);
  } else if (f.engine === 'trtllm') {
    parts = [`trtllm-serve ${model}`, `--tp_size ${tp}`];
    if (f.pp) parts.push(`--pp_size ${f.pp}`);
  } else {
    parts = ['python -m sglang.launch_server', `--model-path ${model}`, `--tp-size ${tp}`];
    if (f.pp) parts.push(`--pp-size ${f.pp}`);
    if (f.ep) parts.push(`--ep-size ${f.ep}`);
    if (f.dp) parts.push(`--dp-size ${f.dp}`);
  }
  if (f.dpa) parts.push('--enable-dp-attention');
  for (const [k, v] of Object.entries(flags)) {
    if (k === '--host-memory') continue;  // headroom's own option, not the server's
    parts.push(v === true || v === 'true' ? k : `${k} ${v}`);
  }
  if (f.extra) parts.push(f.extra);
  return parts.join(' \\\n  ');
}

// ---------------------------------------------------------------- doctor

async function runDoctor() {
  const text = $('log-text').value;
  const out = $('diagnosis');
  if (!text.trim()) { out.replaceChildren(el('p', { class: 'muted', text: 'Paste a log first.' })); return; }
  if (!verbAvailable('doctor')) { out.replaceChildren(el('p', { class: 'bad', text: 'This build of headroom has no doctor verb.' })); return; }
  const f = readForm();
  // The form fills what the log leaves out (--fill); it replaces what the log says only when asked.
  const body = $('doctor-fill').checked ? requestBody(f, $('doctor-override').checked ? [] : ['--fill']) : { args: [] };
  body.log = text;
  const seq = ++state.seq.doctor;
  out.replaceChildren(el('p', { class: 'muted', text: 'Reading the log…' }));
  try {
    const j = await api('/api/doctor', body);
    if (seq !== state.seq.doctor) return;
    state.doctor = j;
    renderDiagnosis(j, text);
  } catch (err) {
    if (seq !== state.seq.doctor) return;
    out.replaceChildren(el('div', { class: 'error', role: 'alert' }, el('strong', { text: 'Could not diagnose: ' }), err.message));
  }
}

function renderDiagnosis(j, text) {
  const out = $('diagnosis');
  out.replaceChildren();
  const healthy = j.stage === 'none' || j.cause === 'not_oom';
  out.append(el('div', { id: 'doctor-verdict', class: 'verdict', 'data-verdict': healthy ? 'fits' : 'oom', 'data-cause': j.cause || '' },
    el('span', { class: 'icon', 'aria-hidden': 'true', text: healthy ? '✓' : '✗' }),
    el('span', { class: 'words' }, el('strong', { class: 'head', text: healthy ? 'No memory failure in this log' : `Failed at ${stageWords(j.stage)}` + (j.rank >= 0 ? ` on GPU ${j.rank}` : '') }),
      el('span', { class: 'detail', text: ` cause: ${j.cause || 'unknown'}` }))));
  if (j.explanation) out.append(el('p', { class: 'explanation', text: j.explanation }));
  const arith = Array.isArray(j.arithmetic) ? j.arithmetic : [];
  if (arith.length) out.append(el('h3', { text: 'The numbers' }), el('ul', { class: 'arith' }, ...arith.map((a) => el('li', { text: a }))));
  const over = Array.isArray(j.overrides) ? j.overrides : [];
  if (over.length) out.append(el('h3', { text: 'The form against the log' }), el('ul', { class: 'overrides' }, ...over.map((o) => el('li', { text: o }))));
  const cal = Array.isArray(j.calibration) ? j.calibration : [];
  if (cal.length) out.append(el('h3', { text: 'Calibration: what the log said, what the forecast said, which the fix uses' }),
    el('pre', { class: 'log calibration', text: cal.join('\n') }));
  const fixes = Array.isArray(j.fix) ? j.fix : [];
  if (fixes.length) {
    const ul = el('ul', { class: 'fixes' });
    for (const fx of fixes) {
      ul.append(el('li', {}, el('code', { text: `${fx.flag} ${fx.value ?? ''}`.trim() }),
        fx.effect ? el('span', { class: 'muted', text: ' — ' + fx.effect }) : null));
    }
    const apply = el('button', { type: 'button', id: 'apply-fix' }, 'Apply the fix to the plan');
    apply.addEventListener('click', () => applyFix(fixes));
    out.append(el('h3', { text: 'Fix' }), ul, apply);
  }
  if (j.command) out.append(el('pre', { class: 'command doctor-command', text: j.command }));
  if (j.forecast_after_fix) {
    const v = el('div', { class: 'verdict small' });
    setVerdict(v, j.forecast_after_fix);
    out.append(el('h3', { text: 'Forecast with the fix' }), v);
  }
  const wnh = Array.isArray(j.will_not_help) ? j.will_not_help : [];
  if (wnh.length) out.append(el('h3', { text: 'Will not help' }), el('ul', { class: 'wnh' }, ...wnh.map((w) => el('li', { text: '✗ ' + w }))));
  const gaps = Array.isArray(j.gaps) ? j.gaps : [];
  if (gaps.length) out.append(el('h3', { text: 'Not in the log (filled from the form or defaults)' }), el('ul', { class: 'notes' }, ...gaps.map((g) => el('li', { text: typeof g === 'string' ? g : JSON.stringify(g) }))));
  // The log with the evidence lines marked (a marker and bold, not colour alone).
  const ev = new Map((Array.isArray(j.evidence) ? j.evidence : []).map((e) => [Number(e.line), e]));
  const lines = text.replace(/\r?\n$/, '').split(/\r?\n/);
  const pre = el('div', { class: 'logview', role: 'list' });
  let firstEvidence = null;
  lines.forEach((line, i) => {
    const n = i + 1, hit = ev.has(n);
    const row = el('div', { class: 'logline' + (hit ? ' evidence' : ''), role: 'listitem' },
      el('span', { class: 'ln', text: String(n) }), el('span', { class: 'mark', text: hit ? '▶' : '' }), el('span', { class: 'lt', text: line || ' ' }));
    if (hit && !firstEvidence) firstEvidence = row;
    pre.append(row);
  });
  out.append(el('h3', { text: `Evidence (${ev.size} line${ev.size === 1 ? '' : 's'} marked ▶)` }), pre);
}

function applyFix(fixes) {
  for (const fx of fixes) {
    const inp = $(flagInputId(fx.flag));
    if (inp) {
      if (inp.type === 'checkbox') inp.checked = true;
      else inp.value = fx.value ?? '';
    } else {
      const extra = $('extra');
      extra.value = (extra.value + ' ' + fx.flag + (fx.value !== undefined && fx.value !== null ? ' ' + fx.value : '')).trim();
    }
  }
  selectTab('plan');
  runPlan();
}

// ---------------------------------------------------------------- tabs, wiring

function verbAvailable(v) { return !state.meta || (state.meta.verbs || []).includes(v); }

function selectTab(tab) {
  state.tab = tab;
  $('deploy').dataset.tab = tab;  // the Host tab shows only the form's host-state box
  document.body.dataset.tab = tab;
  for (const t of TABS) {
    $('tab-' + t).setAttribute('aria-selected', t === tab ? 'true' : 'false');
    $('tab-' + t).tabIndex = t === tab ? 0 : -1;  // one tab stop for the tab list (ARIA tabs pattern)
    $('panel-' + t).hidden = t !== tab;
  }
  writeUrl(readForm());
  if (tab === 'tune') scheduleTune();
  if (tab === 'host') hostShown();
  if (tab === 'versions') versionsShown();
  if (tab !== 'host' && state.planStale) { state.planStale = false; schedulePlan(); }
}

function fillGpus() {
  const sel = $('gpu');
  const want = sel.dataset.want || sel.value || 'h100';
  sel.replaceChildren();
  const apple = el('optgroup', { label: 'Apple silicon (unified memory: llama.cpp)' });
  for (const g of state.gpus) {
    (g.vendor === 'apple' ? apple : sel).append(el('option', { value: g.name }, `${g.name} — ${(g.capacity_bytes / GiB).toFixed(2)} GiB`));
  }
  if (apple.children.length) sel.append(apple);
  const match = state.gpus.find((g) => g.name === want.toLowerCase() || (g.aliases || []).includes(want.toLowerCase()));
  if (match) sel.value = match.name;
  delete sel.dataset.want;
}

function fillModels() {
  const dl = $('model-list');
  dl.replaceChildren(...state.models.map((m) => el('option', { value: m })));
  $('model-count').textContent = `${state.models.length} models in the catalog; type to search.`;
}

function readFileText(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsText(file);
  });
}

async function onUpload() {
  const cf = $('config-file').files[0];
  if (!cf) { state.upload = null; schedulePlan(); return; }
  const qf = $('quant-file').files[0];
  state.upload = { name: cf.name, config: await readFileText(cf), quant: qf ? await readFileText(qf) : null };
  $('upload-name').textContent = `Using ${cf.name}` + (qf ? ` + ${qf.name}` : '') + ' (kept in this tab only; links do not carry it).';
  schedulePlan();
}

function onSourceChange() {
  const upload = $('src-upload').checked;
  $('upload-box').hidden = !upload;
  $('catalog-box').hidden = upload;
  schedulePlan();
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    const ta = el('textarea', { class: 'offscreen' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
  const old = button.textContent;
  button.textContent = 'Copied ✓';
  setTimeout(() => { button.textContent = old; }, 1500);
}

function wire() {
  const form = $('deploy');
  form.addEventListener('input', (e) => {
    if (e.target.type === 'file' || e.target.name === 'model-source') return;
    if (state.tab === 'host') { state.planStale = true; return; }  // the Host tab has its own buttons
    schedulePlan();
  });
  form.addEventListener('change', (e) => {
    if (e.target.id === 'engine') { buildFlagInputs(); schedulePlan(); }
    else if (e.target.name === 'model-source') onSourceChange();
    else if (e.target.type === 'file') onUpload();
    else if (e.target.tagName === 'SELECT' || e.target.type === 'checkbox') schedulePlan();
  });
  form.addEventListener('submit', (e) => { e.preventDefault(); runPlan(); });
  for (const b of document.querySelectorAll('.tabs [role=tab]')) b.addEventListener('click', () => selectTab(b.dataset.tab));
  // Keyboard: the arrow keys, Home and End move between the tabs and select the one reached.
  $('tab-plan').parentElement.addEventListener('keydown', (e) => {
    const tabs = TABS;
    const i = tabs.indexOf(state.tab);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1 + tabs.length, Home: 0, End: tabs.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    selectTab(tabs[next % tabs.length]);
    $('tab-' + state.tab).focus();
  });
  $('mini-verdict').addEventListener('click', () => $('verdict').scrollIntoView({ behavior: 'smooth', block: 'start' }));
  $('copy-link').addEventListener('click', (e) => { writeUrl(readForm()); copyText(location.href, e.currentTarget); });
  $('copy-launch').addEventListener('click', (e) => copyText($('launch').textContent, e.currentTarget));
  for (const id of ['target-context', 'target-concurrency']) $(id).addEventListener('input', scheduleTune);
  $('diagnose').addEventListener('click', runDoctor);
  hostWire(state.hostFromUrl);
  versionsWire(state.versionsToFromUrl);
  llamaWire();
  $('log-file').addEventListener('change', async () => {
    const file = $('log-file').files[0];
    if (file) { $('log-text').value = await readFileText(file); runDoctor(); }
  });
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const file = e.dataTransfer.files[0];
    if (file) { $('log-text').value = await readFileText(file); runDoctor(); }
  });
  let resizeTimer = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (state.plan) drawPlanBars(state.plan);
      if (state.tune) renderTune(state.tune, readForm());
    }, 150);
  });
}

// The host profiles saved on this machine (headroom calibrate): the selector shows when there are any.
async function fillProfiles() {
  let list = [];
  try { list = (await api('/api/profiles')).profiles || []; } catch (err) { return; }
  const sel = $('profile');
  for (const p of list) {
    if (p.error) continue;
    const what = `${p.name} (${p.engine}${p.engine_version ? ' ' + p.engine_version : ''} on ${p.gpu}, ${p.logs} log${p.logs === 1 ? '' : 's'})`;
    sel.append(el('option', { value: p.name, text: what }));
  }
  if (sel.options.length > 1) $('profile-box').hidden = false;
  if (state.profileFromUrl && [...sel.options].some((o) => o.value === state.profileFromUrl)) sel.value = state.profileFromUrl;
}

async function init() {
  readUrl();
  wire();
  selectTab(state.tab);
  try {
    const [meta, gpus, models] = await Promise.all([api('/api/meta'), api('/api/gpus'), api('/api/models')]);
    state.meta = meta;
    state.gpus = gpus.gpus || [];
    state.models = models.models || [];
    $('version').textContent = 'v' + meta.version;
    for (const v of ['plan', 'tune', 'doctor']) if (!verbAvailable(v)) $('tab-' + v).classList.add('unavailable');
  } catch (err) {
    showError('cannot reach the headroom server: ' + err.message);
  }
  fillGpus();
  fillModels();
  await fillProfiles();
  document.body.dataset.ready = '1';
  runPlan();
}

document.addEventListener('DOMContentLoaded', init);
