// The llama.cpp view of the `headroom serve` page (issue 25 item 7): llama-server's flags on the
// form, and the plan JSON's "devices" (src/report/forecast_json.cpp) drawn as one stacked bar per
// device (each GPU, then the host's RAM): model / KV / compute / output & projector buffers against
// the device's capacity, the free rest, OVER where a device does not fit, and the llama-server
// command. Uses app.js's helpers ($, el, svg, fmtBytes, fmtInt, KEY_FLAGS, copyText).
'use strict';

// llama-server's own spellings (common/arg.cpp), as `headroom plan --engine llamacpp` reads them.
KEY_FLAGS.llamacpp = [
  ['--ctx-size', 'number', 'tokens of KV cache, all slots together (0 = the model\'s)'],
  ['--n-gpu-layers', 'text', 'layers on the GPUs, from the last (all, 99, 20, ...)'],
  ['--parallel', 'number', 'slots (sequences)'],
  ['--cache-type-k', 'text', 'f16, q8_0, q4_0, ...'],
  ['--cache-type-v', 'text', 'f16, q8_0, q4_0, ...'],
  ['--flash-attn', 'text', 'on, off, auto'],
  ['--batch-size', 'number', ''],
  ['--ubatch-size', 'number', ''],
  ['--split-mode', 'text', 'layer, row, none'],
  ['--tensor-split', 'text', 'e.g. 3,1'],
  ['--main-gpu', 'number', ''],
  ['--n-cpu-moe', 'number', 'MoE layers whose experts stay in RAM'],
  ['--override-tensor', 'text', 'PATTERN=BUFFER, e.g. exps=CPU'],
  ['--mmproj', 'text', 'projector file name, e.g. mmproj-BF16.gguf'],
  ['--cpu-moe', 'bool', 'every expert in RAM'],
  ['--no-kv-offload', 'bool', 'KV cache in RAM'],
  ['--swa-full', 'bool', 'full-size sliding-window cache'],
  ['--no-mmap', 'bool', ''],
  ['--host-memory', 'text', 'RAM the server may use, e.g. 64GiB (headroom checks the host against it)'],
];
KNOBS.llamacpp = '--ctx-size';
const LLAMA_DEFAULT_QUANT = 'Q4_K_M';  // sent when the quant field is empty (its grey placeholder)

// The buffers of one device, in llama.cpp's order; pattern: index.html's pat-<name>.
function llamaParts(d, rank) {
  const items = (stage) => ((rank && rank.stages) || []).filter((s) => s.name === stage).flatMap((s) => s.items || []);
  const parts = [];
  for (const i of items('init')) {
    if (i.bytes > 0) parts.push({ what: /^held by other/.test(i.what) ? 'held by other processes' : 'GPU runtime',
      bytes: i.bytes, pattern: /^held by other/.test(i.what) ? 'held' : 'init', estimated: i.estimated, range: i.range });
  }
  parts.push({ what: 'model buffer', bytes: d.model_buffer_bytes, pattern: 'weights' });
  parts.push({ what: 'KV buffer', bytes: d.kv_buffer_bytes, pattern: 'kv_pool' });
  if (d.indexer_cache_bytes) parts.push({ what: 'DSA indexer KV', bytes: d.indexer_cache_bytes, pattern: 'kv_pool' });
  if (d.recurrent_state_bytes) parts.push({ what: 'recurrent state', bytes: d.recurrent_state_bytes, pattern: 'kv_pool' });
  parts.push({ what: 'compute buffer', bytes: d.compute_buffer_bytes, pattern: 'workspaces', estimated: true, range: d.compute_buffer_range });
  const proj = items('mmproj').reduce((a, i) => a + i.bytes, 0);
  const projHigh = items('mmproj').reduce((a, i) => a + (i.range ? i.range[1] : i.bytes), 0);
  const out = d.output_buffer_bytes + proj;
  if (out > 0) parts.push({ what: proj > 0 ? 'output & projector' : 'output buffer', bytes: out, pattern: 'other',
    estimated: proj > 0, range: proj > 0 ? [out, d.output_buffer_bytes + projHigh] : null });
  return parts.filter((p) => p.bytes > 0);
}

// One device's figures: its parts, total, the worst end of the estimates, and its verdict.
function llamaDevice(d, gi, j) {
  const rank = d.host ? null : (j.ranks || []).find((r) => r.rank === gi);
  const parts = llamaParts(d, rank);
  const total = parts.reduce((a, p) => a + p.bytes, 0);
  const worst = parts.reduce((a, p) => a + (p.estimated && p.range ? p.range[1] : p.bytes), 0);
  const cap = d.capacity_bytes || 0;  // the host's: --host-memory, else 0 (not checked)
  let verdict = 'host';
  if (!d.host) verdict = total > cap || (j.failure && j.failure.rank === gi) ? 'over' : worst > cap ? 'at_risk' : 'fits';
  else if (cap > 0) verdict = total <= cap ? 'fits' : d.name === 'CPU_Mapped' && total - d.model_buffer_bytes <= cap ? 'at_risk' : 'over';
  return { d, parts, total, worst, cap, verdict, first: !d.host && j.failure && j.failure.rank === gi };
}

function llamaVerdictText(v) {
  if (v.d.host && v.verdict === 'at_risk') return `over by ${fmtBytes(v.total - v.cap)}: the weights mapped from the file are re-read from disk while generating (slow)`;
  if (v.d.host && v.verdict === 'host') return `host RAM the server takes: ${fmtBytes(v.total)}` + (v.d.name === 'CPU_Mapped' ? ' (the model part mmapped from the file)' : '');
  if (v.verdict === 'over') return `OVER by ${fmtBytes(Math.max(0, v.total - v.cap))}` + (v.first ? ' — llama.cpp fails here first' : '');
  if (v.verdict === 'at_risk') return `fits at the central estimate (${fmtBytes(v.cap - v.total)} free), over by ${fmtBytes(v.worst - v.cap)} at the worst end`;
  return `fits — ${fmtBytes(v.cap - v.total)} free`;
}

function llamaLegend(views) {
  const lg = $('legend');
  lg.replaceChildren();
  const seen = [];
  for (const v of views) for (const p of v.parts) if (!seen.some((s) => s.pattern === p.pattern)) seen.push(p);
  const names = { init: 'GPU runtime', held: 'held by other processes', weights: 'model buffer', kv_pool: 'KV cache',
    workspaces: 'compute buffer', other: 'output & projector' };
  const sw = (fill, label, extra) => lg.append(el('span', { class: 'key' },
    svg('svg', { width: 22, height: 14, class: 'swatch', 'aria-hidden': 'true' },
      svg('rect', { width: 22, height: 14, fill, stroke: '#333', 'stroke-width': 1 }), extra ? svg('rect', { width: 22, height: 14, fill: extra }) : null),
    label));
  for (const p of seen) sw(`url(#pat-${p.pattern})`, names[p.pattern] || p.what);
  sw('url(#pat-free)', 'free');
  sw('#8a8f96', 'estimated (hatched)', 'url(#pat-estimated)');
  sw('url(#pat-overflow)', 'OVER: past the capacity');
}

// One bar: the parts stacked from the left, the capacity line, the free rest or the part past it.
function llamaBar(v, scale, width) {
  const barH = 34, top = 18, bottom = 22, left = 4;
  const W = width - 8;
  const x = (b) => left + (b / scale) * W;
  const label = `${v.d.name}: ${fmtBytes(v.total)}` + (v.cap > 0 ? ` of ${fmtBytes(v.cap)}; ${llamaVerdictText(v)}` : ' of host RAM');
  const s = svg('svg', { width, height: top + barH + bottom, class: 'bar device-bar', role: 'img', 'aria-label': label,
    'data-device': v.d.name, 'data-verdict': v.verdict });
  let pos = 0;
  for (const p of v.parts) {
    const x0 = x(pos), w = Math.max(0.5, x(pos + p.bytes) - x0);
    const tip = `${p.what} — ${fmtBytes(p.bytes)}` + (p.estimated && p.range ? ` (estimated, ${fmtBytes(p.range[0])}–${fmtBytes(p.range[1])})` : '');
    s.append(svg('rect', { x: x0, y: top, width: w, height: barH, fill: `url(#pat-${p.pattern})`, stroke: '#fff', 'stroke-width': 1,
      class: 'seg', 'data-part': p.what, 'data-bytes': p.bytes }, svg('title', {}, tip)));
    if (p.estimated) s.append(svg('rect', { x: x0, y: top, width: w, height: barH, fill: 'url(#pat-estimated)', class: 'est' }, svg('title', {}, tip)));
    if (w > 70) {
      s.append(svg('text', { x: x0 + 4, y: top + 14, class: 'seglabel' }, p.what.length > 18 ? p.what.slice(0, 17) + '…' : p.what));
      s.append(svg('text', { x: x0 + 4, y: top + 28, class: 'seglabel' }, fmtBytes(p.bytes)));
    }
    pos += p.bytes;
  }
  if (v.cap > 0) {
    if (v.total <= v.cap) {
      const x0 = x(pos), w = x(v.cap) - x0;
      s.append(svg('rect', { x: x0, y: top, width: w, height: barH, fill: 'url(#pat-free)', stroke: '#6b7280', 'stroke-dasharray': '4 3', class: 'free' },
        svg('title', {}, `free — ${fmtBytes(v.cap - pos)}`)));
      if (w > 60) s.append(svg('text', { x: x0 + 4, y: top + 22, class: 'seglabel dark' }, `free ${fmtBytes(v.cap - pos)}`));
    } else {
      const x0 = x(v.cap), w = Math.max(3, x(v.total) - x0);
      s.append(svg('rect', { x: x0, y: top - 6, width: w, height: barH + 12, fill: 'url(#pat-overflow)', stroke: '#7f1d1d', 'stroke-width': 1.5, class: 'overflow' },
        svg('title', {}, `OVER by ${fmtBytes(v.total - v.cap)}`)));
    }
    s.append(svg('line', { x1: x(v.cap), x2: x(v.cap), y1: 4, y2: top + barH + 6, stroke: '#111', 'stroke-width': 2 }));
    s.append(svg('text', { x: x(v.cap) - 4, y: 12, class: 'caplabel', 'text-anchor': 'end' }, `capacity ${fmtBytes(v.cap)}`));
  }
  s.append(svg('text', { x: left, y: top + barH + 16, class: 'axislabel' }, `used ${fmtBytes(v.total)} · ${llamaVerdictText(v)}`));
  return s;
}

// The "devices" of a llama.cpp plan, drawn in #bars (one scale for every device, so they compare).
function renderLlamaDevices(j) {
  const box = $('bars');
  box.replaceChildren();
  let gi = 0;
  const views = (j.devices || []).map((d) => llamaDevice(d, d.host ? -1 : gi++, j));
  llamaLegend(views);
  $('bars-note').textContent = '(llama.cpp: each device, then the host; one scale)';
  const scale = Math.max(1, ...views.map((v) => Math.max(v.cap, v.total)));
  const width = Math.max(300, box.clientWidth || 700);
  for (const v of views) {
    const layers = v.d.host ? '' : ` · ${fmtInt(v.d.layers)} layer${v.d.layers === 1 ? '' : 's'}`;
    const mark = v.verdict === 'over' ? ' ✗ OVER' : v.verdict === 'at_risk' ? ' ! at risk' : '';
    box.append(el('div', { class: 'rank device' + (v.verdict === 'over' ? ' failing' : ''), 'data-device': v.d.name },
      el('div', { class: 'rankhead' }, el('strong', { text: v.d.host ? `${v.d.name} (host RAM)` : v.d.name }),
        el('span', { class: 'muted', text: layers }), mark ? el('span', { class: 'bad', text: mark }) : null),
      llamaBar(v, scale, width)));
  }
  const cmd = j.launch_command || '';
  $('llama-command').textContent = cmd;
  $('llama-command-box').hidden = !cmd;
  // The stage table stays (app.js renderBreakdown): the GPU the failure names, else the first.
  const groups = groupRanks(j.ranks, j.failure);
  const sel = j.failure ? Math.max(0, groups.findIndex((g) => g.ranks.includes(j.failure.rank))) : 0;
  renderBreakdown(groups[sel], j.failure);
}

function clearLlamaDevices() {
  $('llama-command').textContent = '';
  $('llama-command-box').hidden = true;
}

// The form for llama.cpp: the quant field and the card list show, the parallel sizes hide.
function llamaFormShown(engine) {
  const on = engine === 'llamacpp';
  $('deploy').dataset.engine = engine;
  for (const e of document.querySelectorAll('.llamacpp-only')) e.hidden = !on;
  for (const e of document.querySelectorAll('.not-llamacpp')) e.hidden = on;
}

// The arguments of the llama.cpp-only fields: a quant type (the GGUF derived from the config), a
// file name of a Hub GGUF repo (--gguf), or nothing when the model is ORG/NAME:QUANT (-hf's spelling).
function llamaArgs(f) {
  if (f.source === 'catalog' && /^[^/:]+\/[^/:]+:[A-Za-z0-9_.-]+$/.test(f.model)) return [];
  if (/\.gguf$/i.test(f.quant)) return ['--gguf', f.quant];
  return ['--quant', f.quant || LLAMA_DEFAULT_QUANT];
}

function llamaWire() {
  $('copy-llama-command').addEventListener('click', (e) => copyText($('llama-command').textContent, e.currentTarget));
}
