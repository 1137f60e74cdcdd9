// The Versions tab of the `headroom serve` page (issue 27 item 7): the left form's deployment under
// two releases of its engine (the form's version is "from", this tab's field "to"), posted to
// /api/diff, and the JSON of `headroom diff --json` (src/cli/verb_diff.cpp) drawn answer first:
// verdicts and KV tokens, rank 0 stage by stage (a table and paired bars), the rules in force in
// one release only with their sources, and the settings in force that differ.
// Uses app.js's helpers ($, el, svg, api, fmtBytes, fmtInt, stageWords, patternFor, showError,
// readForm, requestBody, withHostState, hasModel, writeUrl).
'use strict';

// Pairs worth a look, per engine ('' is the newest rules this build knows).
const VERSION_EXAMPLES = {
  vllm: [['0.8.2', '0.10.2'], ['0.10.2', '']],
  sglang: [['0.4.8', 'main@2026-03-15'], ['0.4.6', '0.5.4']],
  trtllm: [['0.21.0', '1.2.0']],
  llamacpp: [['b5000', 'b8157']],
};
const VERDICT_WORDS = { fits: '✓ fits', at_risk: '! at risk', oom: '✗ OOM', refused: '✗ refused' };

const versionsState = { seq: 0, answer: null, ran: false, timer: null };

// ---------------------------------------------------------------- request

// The --to value: the engine on the form at the version typed ("vllm" alone: the newest).
function versionsToSpec(f) {
  const to = $('versions-to').value.trim();
  if (!to) return f.engine;
  return to.startsWith(f.engine + '@') ? to : `${f.engine}@${to}`;
}

function setVersionsBusy(on) {
  $('versions-busy').hidden = !on;
  $('versions-result').setAttribute('aria-busy', on ? 'true' : 'false');
  $('versions-run').disabled = on;
}

async function runVersions() {
  clearTimeout(versionsState.timer);
  const f = readForm();
  writeUrl(f);
  versionsChips(f.engine);
  $('versions-from').textContent = `${f.engine}@${f.ver || 'newest'}`;
  if (!hasModel(f)) {
    $('versions-result').replaceChildren(el('p', { class: 'muted', text: 'Choose a model on the left to compare two versions.' }));
    return;
  }
  const seq = ++versionsState.seq;
  versionsState.ran = true;
  const body = withHostState(requestBody(f));
  body.to = versionsToSpec(f);
  setVersionsBusy(true);
  try {
    const j = await api('/api/diff', body);
    if (seq !== versionsState.seq) return;
    showError(null);
    versionsState.answer = j;
    renderVersions(j);
  } catch (err) {
    if (seq !== versionsState.seq) return;
    versionsState.answer = null;
    showError(err.message);
    $('versions-result').dataset.state = 'error';
    $('versions-result').replaceChildren(el('div', { id: 'versions-verdict', class: 'verdict', 'data-verdict': 'error' },
      el('span', { class: 'icon', 'aria-hidden': 'true', text: '?' }),
      el('span', { class: 'words' }, el('strong', { class: 'head', text: 'No comparison' }),
        el('span', { class: 'detail', text: ' see the problem above' }))));
  } finally {
    if (seq === versionsState.seq) setVersionsBusy(false);
  }
}

function scheduleVersions() {
  clearTimeout(versionsState.timer);
  versionsState.timer = setTimeout(runVersions, 250);
}

// ---------------------------------------------------------------- answer first

const sideName = (s) => `${s.engine} ${s.version}`;
const verdictText = (s) => (VERDICT_WORDS[s.verdict] || s.verdict) + (s.failure_stage ? ` at ${stageWords(s.failure_stage)}` : '');
const starts = (s) => s.verdict === 'fits' || s.verdict === 'at_risk';

function signedInt(n) { return (n > 0 ? '+' : n < 0 ? '−' : '±') + fmtInt(Math.abs(n)); }
function signedBytes(b) { return b === 0 ? 'no change' : (b > 0 ? '+' : '−') + fmtBytes(Math.abs(b)); }
function kvPercent(kv) { return kv.from > 0 ? `${kv.delta >= 0 ? '+' : '−'}${(100 * Math.abs(kv.delta) / kv.from).toFixed(1)}%` : ''; }

function versionsVerdict(j) {
  const kv = j.kv_tokens;
  const icon = !starts(j.to) ? '✗' : j.to.verdict === 'at_risk' ? '!' : '✓';
  const head = `${sideName(j.from)} → ${j.to.version}: ${verdictText(j.from)} → ${verdictText(j.to)}`;
  const kvLine = `KV cache ${fmtInt(kv.from)} → ${fmtInt(kv.to)} tokens: ${signedInt(kv.delta)} tokens` + (kvPercent(kv) ? ` (${kvPercent(kv)})` : '');
  return el('div', { id: 'versions-verdict', class: 'verdict', 'data-verdict': j.to.verdict },
    el('span', { class: 'icon', 'aria-hidden': 'true', text: icon }),
    el('span', { class: 'words' }, el('strong', { class: 'head', text: head }),
      el('span', { class: 'detail', id: 'versions-kv', text: kvLine }),
      el('span', { class: 'message', text: `from: ${j.from.rules}` }), el('span', { class: 'message', text: `to: ${j.to.rules}` })));
}

function versionsStats(j) {
  const kv = j.kv_tokens;
  const st = el('dl', { class: 'stats' });
  const stat = (k, v, note, cls) => st.append(el('div', { class: 'stat' + (cls ? ' ' + cls : '') }, el('dt', { text: k }), el('dd', { text: v }),
    note ? el('dd', { class: 'muted note', text: note }) : null));
  stat(`KV tokens in ${j.from.version}`, fmtInt(kv.from), verdictText(j.from));
  stat(`KV tokens in ${j.to.version}`, fmtInt(kv.to), verdictText(j.to));
  stat('Change', `${signedInt(kv.delta)} tokens`, kvPercent(kv) || '', kv.delta > 0 ? 'better' : kv.delta < 0 ? 'worse' : '');
  return st;
}

// ---------------------------------------------------------------- stages: table and paired bars

// More KV pool is more tokens; every other stage's growth is memory the KV cache does not get.
function deltaClass(s) {
  if (s.delta_bytes === 0) return 'same';
  const more = s.delta_bytes > 0;
  return (s.name === 'kv_pool' ? more : !more) ? 'better' : 'worse';
}

function stageTable(j) {
  const tbl = el('table', { id: 'versions-stages', class: 'breakdown versions-stages' },
    el('caption', { class: 'muted', text: 'Rank 0 (the first GPU), what each stage takes' }),
    el('tr', {}, ...['stage', j.from.version, j.to.version, 'change'].map((h) => el('th', { scope: 'col', text: h }))));
  for (const s of j.stages || []) {
    const cls = deltaClass(s);
    const arrow = s.delta_bytes > 0 ? '▲ ' : s.delta_bytes < 0 ? '▼ ' : '= ';
    tbl.append(el('tr', { 'data-stage': s.name, class: cls === 'same' ? '' : 'changed' },
      el('th', { scope: 'row', text: stageWords(s.name) }), el('td', { class: 'num', text: fmtBytes(s.from_bytes) }),
      el('td', { class: 'num', text: fmtBytes(s.to_bytes) }),
      el('td', { class: `num delta ${cls}`, title: cls === 'same' ? null : (cls === 'better' ? 'leaves more for the KV cache' : 'takes memory from the KV cache'),
        text: arrow + signedBytes(s.delta_bytes) })));
  }
  return el('div', { class: 'scroll' }, tbl);
}

// One bar of a pair, in percentages of the largest stage (it scales with the page).
function pairBar(bytes, max, stage, side, version) {
  const pct = max > 0 ? Math.max(0, 100 * bytes / max) : 0;
  const s = svg('svg', { width: '100%', height: 18, class: `vbar ${side}`, role: 'img', 'data-side': side, 'data-bytes': bytes,
    'aria-label': `${stageWords(stage)} in ${version}: ${fmtBytes(bytes)}` });
  if (pct > 0) {
    // The same pattern for both releases, the "from" bar paler: the stage reads from the pattern.
    s.append(svg('rect', { x: 0, y: 1, width: `${pct.toFixed(3)}%`, height: 16, fill: `url(#pat-${patternFor(stage)})`, stroke: '#fff',
      class: 'seg', 'fill-opacity': side === 'from' ? 0.5 : null }, svg('title', {}, `${stageWords(stage)} in ${version}: ${fmtBytes(bytes)}`)));
  }
  const inside = pct > 70;
  s.append(svg('text', { x: `${inside ? pct : pct.toFixed(3)}%`, dx: inside ? -4 : 4, y: 13, 'text-anchor': inside ? 'end' : 'start',
    class: inside ? 'seglabel' : 'seglabel dark' }, fmtBytes(bytes)));
  return s;
}

function stageChart(j) {
  const stages = j.stages || [];
  const max = Math.max(0, ...stages.flatMap((s) => [s.from_bytes, s.to_bytes]));
  const box = el('div', { id: 'versions-chart', class: 'versions-chart' });
  for (const s of stages) {
    const cls = deltaClass(s);
    box.append(el('div', { class: 'vpair', 'data-stage': s.name },
      el('span', { class: 'vstage' }, el('strong', { text: stageWords(s.name) }),
        el('span', { class: `delta ${cls}`, text: ' ' + signedBytes(s.delta_bytes) })),
      el('span', { class: 'vside muted', text: j.from.version }), pairBar(s.from_bytes, max, s.name, 'from', j.from.version),
      el('span', { class: 'vside', text: j.to.version }), pairBar(s.to_bytes, max, s.name, 'to', j.to.version)));
  }
  return box;
}

// ---------------------------------------------------------------- rules, settings

function ruleList(id, rules) {
  const ul = el('ul', { id, class: 'rules' });
  if (!rules.length) ul.append(el('li', { class: 'muted', text: 'none' }));
  for (const r of rules) {
    const when = [r.since ? `since ${r.since}` : '', r.until ? `until ${r.until}` : ''].filter(Boolean).join(', ');
    ul.append(el('li', { class: 'rule', 'data-rule': r.id },
      el('code', { text: r.id }), when ? el('span', { class: 'muted', text: ` (${when})` }) : null,
      el('div', { class: 'what', text: r.what }), el('div', { class: 'source muted', text: 'source: ' + r.source })));
  }
  return ul;
}

function rulesBlock(j) {
  const gone = (j.rules && j.rules.only_from) || [], added = (j.rules && j.rules.only_to) || [];
  if (!gone.length && !added.length) return [el('h3', { text: 'Rules that changed' }), el('p', { class: 'muted', text: 'The same rules are in force in both versions.' })];
  return [el('h3', { text: 'Rules that changed' }),
    el('h4', { text: `Only in ${j.from.version} (no longer in force in ${j.to.version})` }), ruleList('versions-rules-from', gone),
    el('h4', { text: `Only in ${j.to.version} (new since ${j.from.version})` }), ruleList('versions-rules-to', added)];
}

function settingsBlock(j) {
  const rows = j.settings || [];
  const head = el('h3', { text: 'Settings in force that differ' });
  if (!rows.length) return [head, el('p', { class: 'muted', id: 'versions-settings', text: 'The settings in force are the same in both versions.' })];
  const tbl = el('table', { id: 'versions-settings', class: 'breakdown versions-settings' },
    el('tr', {}, ...['flag', j.from.version, j.to.version].map((h) => el('th', { scope: 'col', text: h }))));
  for (const s of rows) tbl.append(el('tr', {}, el('td', {}, el('code', { text: s.flag })), el('td', { class: 'num', text: s.from }), el('td', { class: 'num', text: s.to })));
  return [head, el('div', { class: 'scroll' }, tbl)];
}

function renderVersions(j) {
  const out = $('versions-result');
  out.dataset.state = 'done';
  out.dataset.pair = `${j.from.version}>${j.to.version}`;
  out.replaceChildren(versionsVerdict(j), versionsStats(j),
    el('h3', { text: 'Stage by stage' }), stageTable(j), stageChart(j), ...rulesBlock(j), ...settingsBlock(j));
}

// ---------------------------------------------------------------- examples, wiring (called from app.js)

function versionsChips(engine) {
  const box = $('versions-examples');
  const pairs = VERSION_EXAMPLES[engine] || [];
  if (box.dataset.engine === engine) return;
  box.dataset.engine = engine;
  box.replaceChildren(...(pairs.length ? [el('span', { class: 'muted', text: 'Try: ' })] : []), ...pairs.map(([from, to]) => {
    const b = el('button', { type: 'button', class: 'chip secondary', 'data-from': from, 'data-to': to }, `${from} → ${to || 'newest'}`);
    b.addEventListener('click', () => {
      $('engine-version').value = from;
      $('versions-to').value = to;
      schedulePlan();  // then the diff (runPlan calls scheduleVersions on this tab)
    });
    return b;
  }));
}

function versionsWire(fromUrl) {
  $('versions-to').value = fromUrl || '';
  $('versions-to').addEventListener('input', scheduleVersions);
  $('versions-to').addEventListener('keydown', (e) => { if (e.key === 'Enter') runVersions(); });
  $('versions-run').addEventListener('click', runVersions);
  $('engine').addEventListener('change', () => versionsChips($('engine').value));  // the engine's own examples at once
}

// The first time the tab shows, compare what the form holds so the tab is never empty.
function versionsShown() {
  versionsChips($('engine').value);
  if (!versionsState.ran) runVersions();
}

// The "to" version for the link.
function versionsUrlValue() { return $('versions-to').value.trim(); }
