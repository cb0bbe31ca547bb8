// docbench dashboard: plain JavaScript, no library, nothing fetched. The data is the JSON in
// <script id="docbench-data">, written by docbench/report/html.py. Every figure shown is either
// taken from it as is (times, sizes, statuses) or derived here from the reader's selection
// (best per query, score) with the rule of docbench/report/terminal.py: score = geometric mean
// over the selected queries of (0.01 + t) / (0.01 + best t); a missing or untrusted answer
// counts as max(timeout, 10 x best); untrusted answers are never "best".
'use strict';
(function () {
  const DATA = JSON.parse(document.getElementById('docbench-data').textContent);
  const QUERIES = [0, 1, 2, 3, 4];
  const SHIFT = DATA.shift;
  const TRUSTED = new Set(DATA.trusted);
  const RUNS = DATA.runs;
  const DATASETS = DATA.datasets;
  const WORKLOADS = DATA.workloads || [];
  // `docbench compare --html`: the comparison (`docbench compare --json`'s document), else null.
  const COMPARISON = DATA.comparison || null;

  const METRICS = [
    {id: 'hot', label: 'Hot run', perQuery: true,
      title: 'Hot runs (fastest of tries 2..n): relative time, lower is better'},
    {id: 'cold', label: 'Cold run', perQuery: true,
      title: 'Cold runs (try 1): relative time, lower is better'},
    {id: 'storage', label: 'Storage', title: 'Storage: total bytes on disk, lower is better'},
    {id: 'quality', label: 'Data quality',
      title: 'Data quality: share of the offered documents loaded, higher is better'},
    {id: 'load', label: 'Load time', title: 'Load time (insert + index build / merges), lower is better'},
    {id: 'memory', label: 'Memory', perQuery: true,
      title: 'Peak memory per query (hot tries): relative, lower is better'},
  ];
  const METRIC = Object.fromEntries(METRICS.map(m => [m.id, m]));
  const STATUS = {
    ok: {mark: '✓', text: 'answer correct (equal to the oracle)'},
    precision: {mark: '≈', text: 'answer correct up to the system\'s time precision'},
    approximate: {mark: '~', text: 'approximate answer, within the tolerance allowed for this system'},
    wrong: {mark: '✗ wrong', text: 'WRONG ANSWER: its time is not a result (excluded from best, penalised in the score)'},
    error: {mark: '✗ error', text: 'the query failed'},
    unchecked: {mark: '? unchecked', text: 'answer not checked (imported from another benchmark / machine, or not recorded)'},
  };
  const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
    '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173'];

  const ALL_KEYS = [...new Set(RUNS.map(r => r.key))];
  const SYSTEMS = [];
  for (const r of RUNS) {
    if (!SYSTEMS.some(s => s.name === r.system_name)) {
      SYSTEMS.push({name: r.system_name, label: r.system || r.system_name});
    }
  }
  const keysOf = name => ALL_KEYS.filter(k => RUNS.find(r => r.key === k).system_name === name);
  const runOfKey = k => RUNS.find(r => r.key === k);
  const colorOf = key => {
    const i = ALL_KEYS.indexOf(key);
    if (i < 0) return '#888';  // a series that is not a run (the driver's ceiling)
    return i < PALETTE.length ? PALETTE[i] : `hsl(${(i * 47) % 360}, 55%, 45%)`;
  };
  const openDetails = new Set();

  // ----- state, kept in the URL hash ------------------------------------------------------

  function defaultScale() {
    let best = null;
    for (const d of DATASETS) {
      const n = RUNS.filter(r => r.dataset === d.label && !r.imported).length * 1000 +
        RUNS.filter(r => r.dataset === d.label).length;
      if (best === null || n >= best.n) best = {label: d.label, n};
    }
    return best ? best.label : null;
  }

  function defaults() {
    return {view: COMPARISON ? 'compare' : 'analytics', scale: defaultScale(), metric: 'hot', runs: null,
      queries: [true, true, true, true, true], unchecked: false};
  }

  function readHash() {
    const state = defaults();
    const text = window.location.hash.replace(/^#/, '');
    for (const part of text.split('&')) {
      if (!part) continue;
      const at = part.indexOf('=');
      const name = at < 0 ? part : part.slice(0, at);
      const raw = at < 0 ? '' : part.slice(at + 1);
      let value;
      try { value = decodeURIComponent(raw); } catch (e) { continue; }
      if (name === 'view' && views().some(v => v.id === value)) state.view = value;
      else if (name === 'scale' && DATASETS.some(d => d.label === value)) state.scale = value;
      else if (name === 'metric' && METRIC[value]) state.metric = value;
      else if (name === 'q') state.queries = QUERIES.map(q => value.includes(String(q + 1)));
      else if (name === 'unchecked') state.unchecked = value === '1';
      else if (name === 'runs') {
        state.runs = raw === '' ? [] : raw.split(',').map(k => {
          try { return decodeURIComponent(k); } catch (e) { return k; }
        });
      }
    }
    return state;
  }

  function hashOf(state) {
    const parts = [`view=${encodeURIComponent(state.view)}`,
      `scale=${encodeURIComponent(state.scale || '')}`, `metric=${state.metric}`,
      `q=${QUERIES.filter(q => state.queries[q]).map(q => q + 1).join('')}`];
    if (state.runs !== null) parts.push(`runs=${state.runs.map(encodeURIComponent).join(',')}`);
    if (state.unchecked) parts.push('unchecked=1');
    return parts.join('&');
  }

  let state = readHash();

  function update() {
    const hash = hashOf(state);
    if (window.location.hash.replace(/^#/, '') !== hash) {
      history.replaceState(null, '', `${window.location.pathname}${window.location.search}#${hash}`);
    }
    render();
  }

  window.addEventListener('hashchange', () => { state = readHash(); render(); });

  const isSelected = key => state.runs === null || state.runs.includes(key);

  function setSelected(keys, on) {
    let selected = state.runs === null ? ALL_KEYS.slice() : state.runs.slice();
    selected = selected.filter(k => !keys.includes(k));
    if (on) selected.push(...keys);
    selected = ALL_KEYS.filter(k => selected.includes(k));
    state.runs = selected.length === ALL_KEYS.length ? null : selected;
  }

  // ----- figures ------------------------------------------------------------------------------

  function queryValue(run, metric, q) {
    return metric === 'cold' ? run.cold[q] : metric === 'hot' ? run.hot[q] : run.memory[q];
  }

  function isTrusted(run, q) {
    const s = run.status[q];
    return TRUSTED.has(s) || (state.unchecked && s === 'unchecked');
  }

  function selectedQueries() {
    const qs = QUERIES.filter(q => state.queries[q]);
    return qs.length ? qs : QUERIES;
  }

  function bestPerQuery(runs, metric) {
    return QUERIES.map(q => {
      const values = runs.filter(r => isTrusted(r, q)).map(r => queryValue(r, metric, q))
        .filter(v => v !== null && v !== undefined);
      return values.length ? Math.min(...values) : null;
    });
  }

  const geomean = ratios => ratios.length ?
    Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length) : null;

  function timeScore(run, metric, best, qs) {
    const ratios = [];
    for (const q of qs) {
      if (best[q] === null) continue;
      let t = queryValue(run, metric, q);
      if (t === null || t === undefined || !isTrusted(run, q)) t = Math.max(run.timeout, 10 * best[q]);
      ratios.push((SHIFT + t) / (SHIFT + best[q]));
    }
    return geomean(ratios);
  }

  function memoryScore(run, best, qs) {
    const ratios = [];
    for (const q of qs) {
      const m = run.memory[q];
      if (best[q] && m) ratios.push(m / best[q]);
    }
    return geomean(ratios);
  }

  function queryRatio(metric, value, best) {
    if (best === null || value === null || value === undefined) return null;
    return metric === 'memory' ? (best ? value / best : null) : (SHIFT + value) / (SHIFT + best);
  }

  const minPositive = values => {
    const v = values.filter(x => x !== null && x !== undefined && x > 0);
    return v.length ? Math.min(...v) : null;
  };

  function scalingValue(run, metric, qs) {
    if (METRIC[metric].perQuery) {
      const values = [];
      for (const q of qs) {
        const v = queryValue(run, metric, q);
        if (v === null || v === undefined || !isTrusted(run, q) || v <= 0) return null;
        values.push(v);
      }
      return geomean(values);
    }
    if (metric === 'storage') return run.total_size;
    if (metric === 'load') return run.load_time;
    if (metric === 'quality') return run.offered && run.loaded !== null ? 100 * run.loaded / run.offered : null;
    return null;
  }

  function untrustedQueries(run, qs) {
    return qs.filter(q => !isTrusted(run, q)).map(q => ({q, status: run.status[q]}));
  }

  // ----- formatting ------------------------------------------------------------------------

  const fmtInt = n => (n === null || n === undefined) ? '-' : Math.round(n).toLocaleString('en-US');
  const fmtRatio = r => `×${r.toFixed(2)}`;
  // Seconds with 3 decimals, as JSONBench shows them; below 10 ms, milliseconds with 3 decimals.
  const fmtSeconds = s => s >= 0.01 || s === 0 ? `${s.toFixed(3)} s` : `${(s * 1000).toFixed(3)} ms`;
  const fmtMs = ms => (ms === null || ms === undefined) ? '-' : fmtSeconds(ms / 1000);
  function fmtBytes(b) {
    if (b === null || b === undefined) return '-';
    if (Math.abs(b) >= 1e9) return `${(b / 1e9).toFixed(2)} GB`;
    if (Math.abs(b) >= 1e6) return `${(b / 1e6).toFixed(1)} MB`;
    if (Math.abs(b) >= 1e3) return `${(b / 1e3).toFixed(1)} kB`;
    return `${b} B`;
  }
  function fmtCount(n) {
    if (n === null || n === undefined) return '?';
    for (const [f, s] of [[1e9, 'B'], [1e6, 'M'], [1e3, 'k']]) {
      if (n >= f) return `${+(n / f).toFixed(n % f === 0 ? 0 : 1)}${s}`;
    }
    return String(n);
  }
  // Truncated, not rounded: 999,997 of 1,000,000 is 99.999%, never 100%.
  const fmtShare = (share, digits) => share >= 1 ? '100%' :
    `${(Math.floor(share * 10 ** (digits + 2)) / 10 ** digits).toFixed(digits)}%`;
  const fmtQueryValue = (metric, v) => metric === 'memory' ? fmtBytes(v) : fmtSeconds(v);

  // Background for a ratio to the best: green at x1, yellow at x2, red at x10, darker beyond.
  function grade(ratio) {
    let hue, light;
    if (ratio <= 1) { hue = 120; light = 78; } else if (ratio <= 2) { hue = 120 - 60 * (ratio - 1); light = 78; } else if (ratio <= 10) { hue = 60 - 60 * (ratio - 2) / 8; light = 78; } else {
      hue = 0; light = Math.max(25, 72 - 47 * Math.min(1, Math.log10(ratio / 10) / 2));
    }
    return {background: `hsl(${hue.toFixed(0)}, 85%, ${light.toFixed(0)}%)`, color: light < 50 ? '#fff' : '#000'};
  }

  // ----- DOM helpers ------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'dataset') Object.assign(node.dataset, v);
      else if (k === 'style') Object.assign(node.style, v);
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else if (k in node && k !== 'list') node[k] = v;
      else node.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const SVGNS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const clear = node => { while (node.firstChild) node.removeChild(node.lastChild); return node; };

  function badges(run, qs) {
    const out = [];
    if (run.imported) {
      const from = (run.doc.imported && run.doc.imported.from) || 'elsewhere';
      out.push(el('span', {class: 'badge imported', title: `Imported from ${from}: measured on another machine (${run.doc.machine || '?'}); answers not checked`}, `imported · ${from}`));
    }
    if (run.error) out.push(el('span', {class: 'badge failed', title: run.error}, 'run failed'));
    const bad = untrustedQueries(run, qs).filter(x => x.status !== 'unchecked');
    if (bad.length) {
      out.push(el('span', {class: 'badge bad', title: bad.map(x => `Q${x.q + 1}: ${run.detail[x.q] || run.query_error[x.q] || x.status}`).join('\n')},
        `✗ ${bad.map(x => `Q${x.q + 1} ${x.status}`).join(', ')}`));
    }
    const unchecked = qs.filter(q => run.status[q] === 'unchecked');
    if (unchecked.length && !run.imported) {
      out.push(el('span', {class: 'badge warn', title: STATUS.unchecked.text}, `? ${unchecked.length} unchecked`));
    }
    return out;
  }

  function runName(run, qs) {
    return el('span', {class: 'run-name', title: run.key},
      el('b', {}, run.system || run.system_name), ' ', el('span', {class: 'variant'}, run.key.slice(run.key.indexOf('/') + 1)),
      run.labels.non_default ? el('span', {class: 'non-default', title: run.labels.non_default}, ' †') : '',
      ' ', badges(run, qs));
  }

  // ----- views ----------------------------------------------------------------------------------

  function views() {
    const list = COMPARISON ? [{id: 'compare', label: 'Compare'}] : [];
    if (RUNS.length || !COMPARISON) list.push({id: 'analytics', label: 'Analytics (Q1-Q5)'});
    if (DATASETS.length >= 2) list.push({id: 'scaling', label: 'Scaling'});
    if (RUNS.some(r => r.concurrency)) list.push({id: 'concurrency', label: 'Concurrent clients'});
    if (RUNS.some(r => r.ingest)) list.push({id: 'ingest', label: 'Live ingest'});
    const names = {updates: 'Updates', throughput: 'Throughput', storage: 'Storage matrix'};
    for (const w of WORKLOADS) list.push({id: `workload-${w.workload}`, label: w.label || names[w.workload] || w.workload});
    return list;
  }

  function renderTabs() {
    const nav = clear(document.getElementById('tabs'));
    for (const v of views()) {
      nav.appendChild(el('button', {class: state.view === v.id ? 'active' : '', dataset: {view: v.id},
        onclick: () => { state.view = v.id; update(); }}, v.label));
    }
  }

  function renderMeta() {
    const imported = RUNS.filter(r => r.imported).length;
    const meta = document.getElementById('meta');
    if (COMPARISON && !RUNS.length) {
      const s = COMPARISON.summary;
      meta.textContent = `Comparison: ${s.pairs} matched pair${s.pairs === 1 ? '' : 's'} of results, ` +
        `${s.flagged} ratio${s.flagged === 1 ? '' : 's'} flagged (${s.regressions} worse); ` +
        `generated ${COMPARISON.generated_at} by docbench ${COMPARISON.docbench_version}.`;
      document.getElementById('footer').textContent = 'A self-contained page: every figure, script and style is inside this file; nothing is fetched. ' +
        'Ratio = contender / baseline. Flagged: beyond the threshold (a size or count as is; a time when its samples differ beyond the noise: ' +
        'Welch\'s t-test on log times, p < 0.05, never with fewer than 2 samples a side), or a figure the contender failed to get.';
      return;
    }
    meta.textContent = `${RUNS.length} analytics result${RUNS.length === 1 ? '' : 's'} on ` +
      `${DATASETS.length} dataset${DATASETS.length === 1 ? '' : 's'}` +
      (imported ? ` (${imported} imported from other machines, marked "imported")` : '') +
      `; generated ${DATA.generated_at} by docbench ${DATA.docbench_version}.`;
    document.getElementById('footer').textContent =
      'A self-contained page: every figure, script and style is inside this file; nothing is fetched. ' +
      'Cells: seconds (or bytes) and the ratio to the best correct answer; ✓ correct, ≈ correct up to time precision, ' +
      '~ approximate, ✗ wrong or failed (struck through, never "best"), ? unchecked. ' +
      'Score: geometric mean over the selected queries of (0.01 s + t) / (0.01 s + best); a missing or wrong answer counts as max(timeout, 10 × best).';
  }

  function selectorRow(label, choices, id) {
    return [el('div', {class: 'label', id: id ? `${id}-label` : null}, label),
      el('div', {class: 'choices', id}, choices)];
  }

  function renderSelectors() {
    const box = clear(document.getElementById('selectors'));
    const analytics = ['analytics', 'concurrency', 'ingest'].includes(state.view);
    const scaling = state.view === 'scaling';
    box.hidden = !(analytics || scaling) || RUNS.length === 0;
    if (box.hidden) return;
    const atScale = k => RUNS.some(r => r.key === k && r.dataset === state.scale);

    box.append(...selectorRow('System', SYSTEMS.map(s => {
      const keys = keysOf(s.name);
      const on = keys.filter(isSelected).length;
      const cls = `selector${on === keys.length ? ' active' : on ? ' partial' : ''}` +
        (analytics && !keys.some(atScale) ? ' disabled' : '');
      return el('button', {class: cls, dataset: {system: s.name}, title: `${s.label}: all its variants`,
        onclick: () => { setSelected(keys, on !== keys.length); update(); }}, s.label);
    }), 'sel-systems'));

    box.append(...selectorRow('Variant', SYSTEMS.map(s => el('span', {class: 'variant-group'},
      el('span', {class: 'group-name'}, s.name),
      keysOf(s.name).map(k => {
        const run = runOfKey(k);
        const cls = `selector${isSelected(k) ? ' active' : ''}${analytics && !atScale(k) ? ' disabled' : ''}`;
        return el('button', {class: cls, dataset: {key: k},
          title: `${k}${run.role ? ` (${run.role})` : ''}${run.doc.variant_description ? `: ${run.doc.variant_description}` : ''}`,
          onclick: () => { setSelected([k], !isSelected(k)); update(); }},
        k.slice(k.indexOf('/') + 1), run.imported ? el('span', {class: 'badge imported'}, 'imported') : null);
      }))), 'sel-variants'));

    // Label filters: each selects (or clears) every run that has the label.
    const LABELS = [
      {id: 'structure', text: 'retains structure', test: r => r.labels.retains_structure === true},
      {id: 'no-structure', text: 'structure not kept', test: r => r.labels.retains_structure === false},
      {id: 'by-hand', text: 'schema by hand', test: r => r.labels.schema_by_hand === true},
      {id: 'no-schema', text: 'no schema by hand', test: r => r.labels.schema_by_hand === false},
      {id: 'lossless', text: 'lossless', test: r => r.labels.lossless === true},
      {id: 'not-lossless', text: 'not lossless', test: r => r.labels.lossless === false},
    ];
    const labelled = LABELS.map(l => ({...l, keys: ALL_KEYS.filter(k => l.test(runOfKey(k)))}))
      .filter(l => l.keys.length);
    if (labelled.length) {
      box.append(...selectorRow('Labels', labelled.map(l => {
        const on = l.keys.filter(isSelected).length;
        return el('button', {class: `selector${on === l.keys.length ? ' active' : on ? ' partial' : ''}`,
          dataset: {label: l.id}, title: `${l.text}: ${l.keys.length} run(s)`,
          onclick: () => { setSelected(l.keys, on !== l.keys.length); update(); }}, l.text);
      }), 'sel-labels'));
    }

    if (analytics) {
      box.append(...selectorRow('Scale', DATASETS.map(d => el('button', {
        class: `selector${state.scale === d.label ? ' active' : ''}`, dataset: {scale: d.label},
        title: `${d.label}: ${fmtInt(d.size)} documents offered`,
        onclick: () => { state.scale = d.label; update(); }},
      `${d.label}${d.size ? ` (${fmtCount(d.size)} docs)` : ''}`)), 'sel-scales'));
    }
    // their figures are per number of clients or second of the stream, not per query
    if (state.view === 'concurrency' || state.view === 'ingest') return;
    if (analytics) {
      box.append(...selectorRow('Metric', METRICS.map(m => el('button', {
        class: `selector${state.metric === m.id ? ' active' : ''}`, dataset: {metric: m.id},
        onclick: () => { state.metric = m.id; update(); }}, m.label)), 'sel-metrics'));
    }

    const queryBoxes = QUERIES.map(q => el('label', {title: `Q${q + 1}: ${DATA.queries[q]}`},
      el('input', {type: 'checkbox', checked: state.queries[q], dataset: {q: q + 1},
        onchange: e => { state.queries[q] = e.target.checked; update(); }}), ` Q${q + 1}`));
    const all = QUERIES.every(q => state.queries[q]);
    queryBoxes.push(el('button', {class: 'selector', id: 'queries-all',
      onclick: () => { state.queries = QUERIES.map(() => !all); update(); }}, all ? 'none' : 'all'));
    box.append(...selectorRow('Queries', queryBoxes, 'sel-queries'));

    if (RUNS.some(r => r.status.includes('unchecked'))) {
      box.append(...selectorRow('Unchecked', [el('label', {title: 'Imported results carry no answer check. Off: they are never "best" and count as missing in the score (as in the terminal report). On: their times count as if correct.'},
        el('input', {type: 'checkbox', id: 'opt-unchecked', checked: state.unchecked,
          onchange: e => { state.unchecked = e.target.checked; update(); }}),
        ' count unchecked answers (imported results) as correct')], 'sel-unchecked'));
    }
  }

  // ----- analytics view -----------------------------------------------------------------------

  function summaryRows(runs, metric, best, qs) {
    let rows;
    if (METRIC[metric].perQuery) {
      rows = runs.map(r => {
        const value = metric === 'memory' ? memoryScore(r, best, qs) : timeScore(r, metric, best, qs);
        return {run: r, value, ratio: value, text: value === null ? '-' : fmtRatio(value)};
      });
    } else if (metric === 'storage') {
      const bestSize = minPositive(runs.filter(r => r.loaded).map(r => r.total_size));
      rows = runs.map(r => ({run: r, value: r.total_size,
        ratio: r.total_size && bestSize ? r.total_size / bestSize : null,
        text: r.total_size === null || r.total_size === undefined ? '-' :
          `${fmtBytes(r.total_size)}${bestSize ? ` (${fmtRatio(r.total_size / bestSize)})` : ''}`}));
      const baselines = (runs.find(r => r.baselines && Object.keys(r.baselines).length) || {}).baselines || {};
      for (const [name, size] of Object.entries(baselines)) {
        if (!size) continue;
        rows.push({baseline: name, value: size, ratio: bestSize ? size / bestSize : null,
          text: `${fmtBytes(size)}${bestSize ? ` (${fmtRatio(size / bestSize)})` : ''}`});
      }
    } else if (metric === 'load') {
      const bestLoad = minPositive(runs.map(r => r.load_time));
      rows = runs.map(r => ({run: r, value: r.load_time,
        ratio: r.load_time && bestLoad ? r.load_time / bestLoad : null,
        text: r.load_time === null || r.load_time === undefined ? '-' :
          `${r.load_time.toFixed(2)} s${bestLoad ? ` (${fmtRatio(r.load_time / bestLoad)})` : ''}`}));
    } else {
      rows = runs.map(r => {
        const share = r.offered && r.loaded !== null && r.loaded !== undefined ? r.loaded / r.offered : null;
        return {run: r, value: share, ratio: share === null ? null : 1 + 1000 * (1 - share),
          text: share === null ? '-' : `${fmtShare(share, 3)} (${fmtInt(r.loaded)} / ${fmtInt(r.offered)})`};
      });
    }
    const higherBetter = metric === 'quality';
    rows.sort((a, b) => {
      if (a.value === null || a.value === undefined) return 1;
      if (b.value === null || b.value === undefined) return -1;
      return higherBetter ? b.value - a.value : a.value - b.value;
    });
    return rows;
  }

  function renderSummary(rows, metric, qs) {
    const table = clear(document.getElementById('summary'));
    document.getElementById('summary-title').textContent = METRIC[metric].title;
    const note = document.getElementById('summary-note');
    const d = DATASETS.find(x => x.label === state.scale);
    note.textContent = `Dataset ${state.scale} (${fmtInt(d && d.size)} documents offered)` +
      (METRIC[metric].perQuery ? `; queries ${qs.map(q => `Q${q + 1}`).join(', ')}` +
        (metric === 'memory' ? '; geometric mean of peak memory / least peak memory, over queries with a figure.' :
          '; geometric mean of (0.01 + t) / (0.01 + best); a missing or untrusted answer counts as max(timeout, 10 × best).') : '.');
    // Bars: linear in the ratio to the best while the spread is small (x20 at most), else
    // logarithmic (so that a x1000 system does not squash all the others to nothing).
    const values = rows.map(r => r.value).filter(v => v !== null && v !== undefined && v > 0);
    const least = values.length ? Math.min(...values) : 1;
    const spread = values.length ? Math.max(...values) / least : 1;
    for (const row of rows) {
      let width = 0;
      if (row.value !== null && row.value !== undefined && row.value > 0) {
        const r = row.value / least;
        if (metric === 'quality') width = 100 * row.value;
        else if (spread <= 20) width = 100 * r / spread;
        else width = 100 * (0.04 + 0.96 * Math.log10(r) / Math.log10(spread));
      }
      const run = row.run;
      const untrusted = run && METRIC[metric].perQuery && untrustedQueries(run, qs).length > 0;
      const isBest = row.ratio !== null && Math.abs(row.ratio - 1) < 1e-12 && !untrusted && !row.baseline;
      const bar = el('div', {class: `summary-bar${row.baseline ? ' baseline' : ''}${untrusted ? ' untrusted' : ''}${isBest ? ' best' : ''}`,
        style: {width: `${Math.max(0.3, Math.min(100, width))}%`}});
      if (row.baseline) {
        table.appendChild(el('tr', {class: 'summary-row baseline-row', dataset: {baseline: row.baseline}},
          el('td', {class: 'summary-name'}, `file: ndjson ${row.baseline}`),
          el('td', {class: 'summary-bar-cell'}, bar),
          el('td', {class: 'summary-number', dataset: {value: row.value}}, row.text)));
        continue;
      }
      table.appendChild(el('tr', {class: 'summary-row', dataset: {key: run.key}},
        el('td', {class: 'summary-name'}, runName(run, METRIC[metric].perQuery ? qs : QUERIES)),
        el('td', {class: 'summary-bar-cell', title: run.doc.comment || ''}, bar),
        el('td', {class: 'summary-number', dataset: {value: row.value === null || row.value === undefined ? '' : row.value}}, row.text)));
    }
  }

  function queryCell(run, metric, q, best, qs) {
    const v = queryValue(run, metric, q);
    const st = run.status[q];
    const info = STATUS[st] || {mark: st, text: st};
    const td = el('td', {class: `cell status-${st}${qs.includes(q) ? '' : ' unselected'}`,
      dataset: {key: run.key, q: q + 1, status: st, value: v === null || v === undefined ? '' : v}});
    const lines = [`${run.key}, Q${q + 1} (${DATA.queries[q]})`];
    if (v === null || v === undefined) {
      td.classList.add('missing');
      const error = run.query_error[q] || (run.error ? `run failed: ${run.error}` : 'no result');
      td.append(el('span', {class: 'mark'}, '✗'), ` ${error.split(':')[0].slice(0, 24)}`);
      lines.push(`no result: ${error}`);
    } else {
      const trusted = isTrusted(run, q);
      const ratio = queryRatio(metric, v, best[q]);
      const bad = st === 'wrong' || st === 'error';
      td.append(el('span', {class: 'value'}, fmtQueryValue(metric, v)));
      if (ratio !== null && !bad) td.append(el('span', {class: 'ratio'}, ` ${fmtRatio(ratio)}`));
      td.append(el('span', {class: 'mark'}, info.mark));
      if (!bad && ratio !== null) {
        const g = grade(ratio);
        td.style.background = g.background;
        td.style.color = g.color;
      }
      if (trusted && best[q] !== null && v === best[q]) td.classList.add('best');
      lines.push(`${metric === 'memory' ? 'peak memory' : metric}: ${v}${metric === 'memory' ? ' bytes' : ' s'}` +
        (ratio !== null ? ` (${fmtRatio(ratio)} the best correct answer)` : ''));
      if (!trusted) lines.push(st === 'unchecked' ? 'not compared: unchecked answers are never "best"' : 'not counted: excluded from "best", penalised in the score');
    }
    lines.push(`answer: ${st}: ${info.text}`);
    if (run.detail[q]) lines.push(`detail: ${run.detail[q]}`);
    if (run.query_error[q] && v !== null && v !== undefined) lines.push(`error: ${run.query_error[q]}`);
    td.title = lines.join('\n');
    return td;
  }

  function answersCell(run) {
    const bad = QUERIES.filter(q => !TRUSTED.has(run.status[q]) && run.status[q] !== 'unchecked');
    const unchecked = QUERIES.filter(q => run.status[q] === 'unchecked');
    const good = QUERIES.length - bad.length - unchecked.length;
    const td = el('td', {class: 'text answers', title: QUERIES.map(q => `Q${q + 1}: ${run.status[q]}${run.detail[q] ? ` (${run.detail[q]})` : ''}`).join('\n')});
    if (bad.length) td.append(el('span', {class: 'badge bad'}, `✗ ${bad.map(q => `Q${q + 1} ${run.status[q]}`).join(', ')}`), ' ');
    if (unchecked.length) td.append(el('span', {class: 'badge warn'}, `? ${unchecked.length} unchecked`), ' ');
    if (good) td.append(`${good}/5 ✓`);
    return td;
  }

  const numCell = (value, text, field, extra) => el('td', {dataset: {field, value: value === null || value === undefined ? '' : value}, ...(extra || {})}, text);

  function detailColumns(metric) {
    if (METRIC[metric].perQuery) {
      return [...QUERIES.map(q => ({label: `Q${q + 1}`, title: DATA.queries[q], q})), {label: 'score'}];
    }
    if (metric === 'storage') return ['total', 'data', 'index', 'on disk (du)', 'vs raw ndjson', 'answers'].map(label => ({label}));
    if (metric === 'quality') return ['loaded', 'offered', 'share', 'refused', 'first refusal', 'answers'].map(label => ({label}));
    return ['load time', 'insert', 'index / finish', 'documents/s', 'answers'].map(label => ({label}));
  }

  function renderDetails(rows, metric, best, qs) {
    const table = clear(document.getElementById('details'));
    const columns = detailColumns(metric);
    table.appendChild(el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', {}, 'system / variant'),
      columns.map(c => el('th', {title: c.title || '', class: c.q !== undefined && !qs.includes(c.q) ? 'unselected' : ''}, c.label)))));
    const body = el('tbody', {});
    table.appendChild(body);
    for (const row of rows) {
      const run = row.run;
      if (!run) continue;
      const open = openDetails.has(run.key);
      const tr = el('tr', {class: 'run-row', dataset: {key: run.key}});
      tr.appendChild(el('td', {}, el('button', {class: 'toggle', title: 'environment and details of this result',
        'aria-expanded': String(open), dataset: {details: run.key},
        onclick: () => { if (open) openDetails.delete(run.key); else openDetails.add(run.key); render(); }}, open ? '▾' : '▸')));
      tr.appendChild(el('td', {class: 'name'}, runName(run, METRIC[metric].perQuery ? qs : QUERIES)));
      if (METRIC[metric].perQuery) {
        for (const q of QUERIES) tr.appendChild(queryCell(run, metric, q, best, qs));
        const td = numCell(row.value, row.text, 'score');
        if (row.ratio !== null) Object.assign(td.style, grade(row.ratio));
        tr.appendChild(td);
      } else if (metric === 'storage') {
        const raw = run.baselines && run.baselines.raw;
        const total = numCell(run.total_size, row.text, 'total_size');
        if (row.ratio !== null) Object.assign(total.style, grade(row.ratio));
        tr.append(total, numCell(run.data_size, fmtBytes(run.data_size), 'data_size'),
          numCell(run.index_size, fmtBytes(run.index_size), 'index_size'),
          numCell(run.on_disk, fmtBytes(run.on_disk), 'on_disk'),
          numCell(run.total_size && raw ? run.total_size / raw : null,
            run.total_size && raw ? `${(run.total_size / raw).toFixed(2)}` : '-', 'vs_raw'), answersCell(run));
      } else if (metric === 'quality') {
        const share = numCell(row.value, row.value === null ? '-' : fmtShare(row.value, 4), 'loaded_share');
        if (row.ratio !== null) Object.assign(share.style, grade(row.ratio));
        tr.append(numCell(run.loaded, fmtInt(run.loaded), 'num_loaded_documents'),
          numCell(run.offered, fmtInt(run.offered), 'dataset_size'), share,
          numCell(run.refused, fmtInt(run.refused), 'refused'),
          el('td', {class: 'text', title: run.first_refusal || ''}, run.first_refusal || ''), answersCell(run));
      } else {
        const load = numCell(run.load_time, row.text, 'load_time');
        if (row.ratio !== null) Object.assign(load.style, grade(row.ratio));
        const l = run.load || {};
        tr.append(load, numCell(l.insert_seconds, l.insert_seconds === undefined ? '-' : `${l.insert_seconds.toFixed(2)} s`, 'insert_seconds'),
          numCell(l.finish_seconds, l.finish_seconds === undefined ? '-' : `${l.finish_seconds.toFixed(2)} s`, 'finish_seconds'),
          numCell(l.documents_per_second, fmtInt(l.documents_per_second), 'documents_per_second'), answersCell(run));
      }
      body.appendChild(tr);
      if (open) {
        body.appendChild(el('tr', {class: 'details-row', dataset: {detailsOf: run.key}},
          el('td', {colSpan: columns.length + 2}, detailsPanel(run))));
      }
    }
    const legend = clear(document.getElementById('legend'));
    for (const [name, info] of Object.entries(STATUS)) {
      legend.appendChild(el('span', {class: `legend-item status-${name}`}, `${info.mark}: ${info.text.split(':')[0]}`));
    }
  }

  // ----- the details panel (environment, dataset, answers...) ------------------------------

  function valueNode(v) {
    if (v === null || v === undefined || v === '') return null;
    if (Array.isArray(v) && v.every(x => typeof x !== 'object' || x === null)) return v.length ? v.join(', ') : null;
    if (typeof v === 'object') return el('pre', {}, JSON.stringify(v, null, 1));
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    return String(v);
  }

  function dl(pairs) {
    const list = el('dl', {});
    for (const [k, v] of pairs) {
      const node = valueNode(v);
      if (node === null) continue;
      list.append(el('dt', {}, k), el('dd', {}, node));
    }
    return list;
  }

  function detailsPanel(run) {
    const d = run.doc;
    const env = d.environment || {};
    const ds = d.dataset || {};
    const sections = [];
    const section = (title, ...content) => sections.push(el('section', {}, el('h3', {}, title), ...content));
    if (d.imported) {
      section('Imported', dl([['from', d.imported.from], ['source', d.imported.source],
        ['imported at', d.imported.imported_at], ['note', 'Measured on another machine by another harness: answers were not checked by docbench and the environment is only what the source file says.']]));
    }
    section('Result', dl([['system', `${d.system || ''} ${d.version ? `(version ${d.version})` : ''}`],
      ['variant', `${d.variant || '-'}${d.variant_role ? ` (${d.variant_role})` : ''}`],
      ['variant description', d.variant_description], ['date', d.date], ['started', d.started_at],
      ['finished', d.finished_at], ['complete', d.complete], ['result file', run.path],
      ['error', d.error], ['retains structure', d.retains_structure],
      ['representation', run.labels.representation],
      ['not the engine\'s default', run.labels.non_default],
      ['schema by hand', run.labels.schema_by_hand === null ? null : run.labels.schema_by_hand ? 'yes' : 'no'],
      ['lossless', run.labels.lossless === null ? 'no fidelity result for this system/variant'
        : run.labels.lossless ? 'yes (the fidelity corpus came back as the same JSON values)'
        : 'no (see the Fidelity section)']]));
    const envPairs = [['machine', d.machine], ['os', d.os]];
    for (const [k, v] of Object.entries(env)) {
      if (k === 'versions' || envPairs.some(([name, value]) => name === k && value === v)) continue;
      envPairs.push([k.replace(/_/g, ' '), k === 'memory_bytes' && v ? `${fmtBytes(v)} (${(v / 2 ** 30).toFixed(1)} GiB)` : v]);
    }
    section('Environment', dl(envPairs));
    if (env.versions && Object.keys(env.versions).length) section('Versions', dl(Object.entries(env.versions)));
    section('Method', dl([['cold method', d.cold_method], ['tries', d.tries], ['timeout', d.timeout_seconds ? `${d.timeout_seconds} s` : null],
      ['tags', d.tags], ['comment', d.comment]]));
    section('Dataset', dl([['label', ds.label], ['documents offered', fmtInt(d.dataset_size)], ['path', ds.path],
      ['files', ds.files && ds.files.length ? `${ds.files.length}: ${ds.files.slice(0, 8).join(', ')}${ds.files.length > 8 ? ', …' : ''}` : null],
      ['documents (oracle)', ds.documents_by_oracle], ['invalid lines (oracle)', ds.invalid_lines_by_oracle],
      ['baselines', ds.baselines ? Object.entries(ds.baselines).map(([k, v]) => `${k} ${fmtBytes(v)}`).join(', ') : null],
      ['manifest', ds.manifest], ['source', ds.source]]));
    const load = d.load || {};
    const errors = d.load_errors || {};
    section('Load', dl([...Object.entries(load).map(([k, v]) => [k.replace(/_/g, ' '), v]),
      ['refused', errors.count], ['first refusals', (errors.first || []).slice(0, 5).map(e => `${e.file}:${e.line} ${e.reason}`).join('\n') || null]]));
    section('Answers', dl(QUERIES.map(q => [`Q${q + 1}`, [run.status[q], run.detail[q], run.query_error[q],
      (d.plan_warnings || [])[q] ? `plan: ${(d.plan_warnings || [])[q]}` : null].filter(Boolean).join(' — ')])));
    if (d.warnings && d.warnings.length) section('Warnings', dl(d.warnings.map((w, i) => [`${i + 1}`, w])));
    sections.push(el('section', {class: 'raw'}, el('details', {}, el('summary', {}, 'the whole result document (without the timing arrays)'),
      el('pre', {}, JSON.stringify(d, null, 1)))));
    return el('div', {class: 'panel', dataset: {panel: run.key}}, sections);
  }

  // ----- charts (inline SVG) ------------------------------------------------------------------

  function logDomain(values) {
    const v = values.filter(x => x > 0);
    let lo = Math.floor(Math.log10(Math.min(...v)));
    let hi = Math.ceil(Math.log10(Math.max(...v)));
    if (hi <= lo) hi = lo + 1;
    return [lo, hi];
  }

  function logTicks(lo, hi) {
    const ticks = [];
    for (let k = lo; k <= hi; k++) {
      ticks.push(10 ** k);
      if (hi - lo <= 2 && k < hi) ticks.push(2 * 10 ** k, 5 * 10 ** k);
    }
    return ticks.sort((a, b) => a - b);
  }

  function fmtTick(v, unit) {
    if (unit === 'bytes') {
      for (const [f, s] of [[1e12, 'TB'], [1e9, 'GB'], [1e6, 'MB'], [1e3, 'kB']]) {
        if (v >= f) return `${+(v / f).toPrecision(3)} ${s}`;
      }
      return `${v} B`;
    }
    if (unit === 'docs') return fmtCount(v);
    if (unit === '%') return `${+v.toFixed(3)}%`;
    if (unit === 's') return v >= 1 ? `${+v.toPrecision(3)} s` : `${+(v * 1000).toPrecision(3)} ms`;
    return String(+v.toPrecision(3));
  }

  function legend(keys) {
    return el('div', {class: 'series-legend'}, keys.map(k => {
      const run = runOfKey(k);
      return el('span', {}, el('span', {class: 'swatch', style: {background: colorOf(k)}}), k,
        run && run.imported ? ' (imported)' : '');
    }));
  }

  function queryChart(runs, metric, best, qs) {
    const box = clear(document.getElementById('query-chart'));
    if (!METRIC[metric].perQuery || !runs.length) return;
    const values = [];
    for (const r of runs) for (const q of qs) { const v = queryValue(r, metric, q); if (v > 0) values.push(v); }
    if (!values.length) return;
    const W = 1000, H = 300, ml = 70, mr = 10, mt = 24, mb = 34;
    const [lo, hi] = logDomain(values);
    const y = v => mt + (H - mt - mb) * (1 - (Math.log10(v) - lo) / (hi - lo));
    const groupW = (W - ml - mr) / qs.length;
    const barW = Math.min(34, groupW * 0.85 / runs.length);
    const unit = metric === 'memory' ? 'bytes' : 's';
    const root = svg('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${METRIC[metric].label} per query`},
      svg('defs', {}, svg('pattern', {id: 'hatch-wrong', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)'},
        svg('rect', {width: 6, height: 6, fill: '#ffd6d6'}), svg('rect', {width: 3, height: 6, fill: '#c62828'}))),
      svg('text', {x: ml, y: 14, class: 'title'}, `${METRIC[metric].label} per query (${unit === 's' ? 'seconds' : 'bytes'}, log scale); hatched red ✗ = wrong answer or failed`));
    for (const t of logTicks(lo, hi)) {
      root.append(svg('line', {x1: ml, x2: W - mr, y1: y(t), y2: y(t), class: 'grid'}),
        svg('text', {x: ml - 6, y: y(t) + 4, 'text-anchor': 'end'}, fmtTick(t, unit)));
    }
    root.append(svg('line', {x1: ml, x2: ml, y1: mt, y2: H - mb, class: 'axis'}),
      svg('line', {x1: ml, x2: W - mr, y1: H - mb, y2: H - mb, class: 'axis'}));
    qs.forEach((q, gi) => {
      const x0 = ml + gi * groupW + (groupW - barW * runs.length) / 2;
      root.append(svg('text', {x: ml + gi * groupW + groupW / 2, y: H - mb + 18, 'text-anchor': 'middle'}, `Q${q + 1}`));
      runs.forEach((r, ri) => {
        const v = queryValue(r, metric, q);
        const x = x0 + ri * barW;
        const st = r.status[q];
        if (v === null || v === undefined || v <= 0) {
          root.append(svg('text', {x: x + barW / 2, y: H - mb - 4, 'text-anchor': 'middle', class: 'bad'},
            svg('title', {}, `${r.key} Q${q + 1}: no result`), '✗'));
          return;
        }
        const bad = !isTrusted(r, q) && st !== 'unchecked';
        const top = y(v);
        root.append(svg('rect', {x: x + 1, y: top, width: Math.max(1, barW - 2), height: Math.max(1, H - mb - top),
          fill: bad ? 'url(#hatch-wrong)' : colorOf(r.key), opacity: st === 'unchecked' && !state.unchecked ? 0.55 : 1,
          stroke: bad ? '#c62828' : 'none'},
        svg('title', {}, `${r.key} Q${q + 1}: ${fmtQueryValue(metric, v)} — ${st}`)));
        if (bad) root.append(svg('text', {x: x + barW / 2, y: top - 3, 'text-anchor': 'middle', class: 'bad'}, '✗'));
      });
    });
    box.append(root, legend(runs.map(r => r.key)));
  }

  function lineChart(title, metric, unit, series, logY, xLabel = 'documents (log scale)', linearX = false) {
    const W = 480, H = 300, ml = 72, mr = 14, mt = 16, mb = 40;
    const points = series.flatMap(s => s.points);
    const figure = el('figure', {dataset: {chart: metric}}, el('figcaption', {}, title));
    if (!points.length) {
      figure.append(el('p', {class: 'note'}, 'No figure at any scale for the selection.'));
      return figure;
    }
    const [xlo, xhi] = linearX ? [0, Math.max(1, ...points.map(p => p[0]))] : logDomain(points.map(p => p[0]));
    const x = linearX ? (v => ml + (W - ml - mr) * v / xhi) : (v => ml + (W - ml - mr) * (Math.log10(v) - xlo) / (xhi - xlo));
    let y, yTicks;
    if (logY) {
      const [lo, hi] = logDomain(points.map(p => p[1]));
      y = v => mt + (H - mt - mb) * (1 - (Math.log10(v) - lo) / (hi - lo));
      yTicks = logTicks(lo, hi);
    } else {
      const min = Math.min(...points.map(p => p[1]));
      const lo = Math.max(0, Math.floor(min - Math.max(1, (100 - min) * 0.3)));
      y = v => mt + (H - mt - mb) * (1 - (v - lo) / (100 - lo));
      yTicks = [0, 0.25, 0.5, 0.75, 1].map(f => lo + f * (100 - lo));
    }
    const root = svg('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title});
    for (const t of yTicks) {
      root.append(svg('line', {x1: ml, x2: W - mr, y1: y(t), y2: y(t), class: 'grid'}),
        svg('text', {x: ml - 6, y: y(t) + 4, 'text-anchor': 'end'}, fmtTick(t, unit)));
    }
    const xTicks = linearX ? [0, 0.25, 0.5, 0.75, 1].map(f => Math.round(f * xhi)) : [];
    if (!linearX) for (let k = xlo; k <= xhi; k++) xTicks.push(10 ** k);
    for (const t of xTicks) {
      root.append(svg('line', {x1: x(t), x2: x(t), y1: mt, y2: H - mb, class: 'grid'}),
        svg('text', {x: x(t), y: H - mb + 16, 'text-anchor': 'middle'}, fmtCount(t)));
    }
    root.append(svg('line', {x1: ml, x2: ml, y1: mt, y2: H - mb, class: 'axis'}),
      svg('line', {x1: ml, x2: W - mr, y1: H - mb, y2: H - mb, class: 'axis'}),
      svg('text', {x: (ml + W - mr) / 2, y: H - 6, 'text-anchor': 'middle'}, xLabel));
    for (const s of series) {
      if (!s.points.length) continue;
      const color = colorOf(s.key);
      if (s.points.length > 1) {
        root.append(svg('polyline', {points: s.points.map(p => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' '),
          fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-dasharray': s.imported ? '5 3' : null}));
      }
      for (const p of s.points) {
        root.append(svg('circle', {cx: x(p[0]), cy: y(p[1]), r: 4, fill: color, 'data-key': s.key, 'data-x': p[0], 'data-y': p[1]},
          svg('title', {}, `${s.key}: ${fmtInt(p[0])} ${xLabel.split(' ')[0]} → ${fmtTick(p[1], unit)}`)));
        // A break point (the shapes workload): a ring around the point where the system broke.
        if ((s.breaks || []).includes(p[0])) {
          root.append(svg('circle', {cx: x(p[0]), cy: y(p[1]), r: 8, fill: 'none', stroke: 'crimson', 'stroke-width': 2, class: 'break'},
            svg('title', {}, `${s.key} breaks at ${p[0]}: ${s.break_reason || ''}`)));
        }
      }
    }
    figure.append(root, legend(series.filter(s => s.points.length).map(s => s.key)));
    return figure;
  }

  function renderScaling() {
    const box = clear(document.getElementById('scaling-charts'));
    const qs = selectedQueries();
    const keys = ALL_KEYS.filter(isSelected);
    document.getElementById('scaling-note').textContent =
      `Each metric against the dataset size (documents offered), log axes, one line per system/variant (dashed: imported). ` +
      `Timings and memory: geometric mean over ${qs.map(q => `Q${q + 1}`).join(', ')}; a point is left out when one of these ` +
      'queries has no correct answer at that scale.';
    const charts = [['hot', 'Hot run: geometric mean time', 's', true], ['cold', 'Cold run: geometric mean time', 's', true],
      ['storage', 'Storage: total bytes', 'bytes', true], ['load', 'Load time', 's', true],
      ['quality', 'Data quality: documents loaded', '%', false], ['memory', 'Peak memory: geometric mean', 'bytes', true]];
    for (const [metric, title, unit, logY] of charts) {
      const series = keys.map(k => {
        const points = RUNS.filter(r => r.key === k && r.dataset_size)
          .map(r => [r.dataset_size, scalingValue(r, metric, qs)])
          .filter(p => p[1] !== null && p[1] !== undefined && (!logY || p[1] > 0))
          .sort((a, b) => a[0] - b[0]);
        return {key: k, imported: runOfKey(k).imported, points};
      });
      box.appendChild(lineChart(title, metric, unit, series, logY));
    }
  }

  // ----- live ingest (run analytics --ingest-rates) -----------------------------------------

  function renderIngest() {
    const box = clear(document.getElementById('ingest-charts'));
    const runs = RUNS.filter(r => r.ingest && isSelected(r.key) && r.dataset === state.scale);
    document.getElementById('ingest-note').textContent = runs.length
      ? 'Documents arriving at each target rate through the system’s own loader while query clients run: ' +
        'documents acknowledged per second, and the freshness: for each marker document (one a second) the time from its acknowledgement ' +
        'until the system’s own point lookup found it, or, for a representation without one, the median time until a count that forces nothing reached ' +
        'the batches of the second; one line per run and level. Query answers are not checked while the data changes; the count at the end is.'
      : `No run at ${state.scale} has live ingest: choose another scale or select a run that has it.`;
    const target = l => (l.target ? `${fmtInt(l.target)}/s` : 'max');
    const series = field => runs.flatMap(r => r.ingest.levels.map(l => ({key: `${r.key} @ ${target(l)}`, imported: false, points: l[field].filter(p => p[1] > 0)})));
    box.appendChild(lineChart('Documents acknowledged per second', 'ingest-rate', '', series('rate_points'), true, 'seconds', true));
    box.appendChild(lineChart('Freshness (markers; or by count: median of the batches acknowledged in the second)', 'ingest-freshness', 's', series('freshness_points'), true, 'seconds', true));
    const head = ['run', 'target', 'offered /s', 'acknowledged /s', 'max lag s', 'refused', 'freshness by', 'freshness p50', 'p99',
      'queries p50 idle → during', 'p99 idle → during', 'count'];
    const table = el('table', {class: 'details', id: 'ingest-table'},
      el('thead', {}, el('tr', {}, head.map(h => el('th', {}, h)))),
      el('tbody', {}, runs.flatMap(r => r.ingest.levels.map(l => el('tr', {},
        [r.key, target(l), fmtInt(l.offered_rate), fmtInt(l.sustained_rate), l.lag_max_s ?? '-', fmtInt(l.refused),
         l.freshness_by, fmtMs(l.freshness_p50_ms), fmtMs(l.freshness_p99_ms),
         `${fmtMs(l.queries_idle_p50_ms)} → ${fmtMs(l.queries_during_p50_ms)}`,
         `${fmtMs(l.queries_idle_p99_ms)} → ${fmtMs(l.queries_during_p99_ms)}`,
         l.exact ? `exact (${fmtInt(l.final_count)})` : `${fmtInt(l.final_count)} of ${fmtInt(l.expected_count)}${l.error ? ': ' + l.error : ''}`,
        ].map(v => el('td', {}, String(v))))))));
    clear(document.getElementById('ingest-rows')).appendChild(table);
  }

  // ----- concurrent clients (run analytics --clients) ----------------------------------------

  function renderConcurrency() {
    const box = clear(document.getElementById('concurrency-charts'));
    const runs = RUNS.filter(r => r.concurrency && isSelected(r.key) && r.dataset === state.scale);
    const first = runs[0] && runs[0].concurrency;
    document.getElementById('concurrency-note').textContent = first
      ? `Q1-Q5 from N clients at once, each in a seeded random order, ${first.mode}` +
        `${first.rate ? ` at ${first.rate} queries/s in all` : ''}, ${first.duration_s} s per level at ${state.scale}. ` +
        'Only correct answers count (a wrong answer is an error, never a fast query). ' +
        (runs.length === 1 ? 'The dashed grey line is the driver’s own ceiling (the same clients against an instant echo of the oracle’s answers).'
          : 'The driver’s own ceiling (the same clients against an instant echo of the oracle’s answers) is in the table; select one run to draw it.')
      : `No run at ${state.scale} has concurrent clients: choose another scale or select a run that has them.`;
    const series = (field, ceiling) => runs.map(r => ({key: r.key, imported: ceiling,
      points: (ceiling ? r.concurrency.ceiling : r.concurrency.levels)
        .filter(l => l[field] !== null && l[field] > 0).map(l => [l.clients, l[field]])}));
    const withCeiling = runs.length === 1 ? series('qps', true).map(s => ({...s, key: `${s.key} (driver ceiling)`})) : [];
    box.appendChild(lineChart('Queries per second (correct answers)', 'qps', '', [...series('qps', false), ...withCeiling], true, 'clients (log scale)'));
    box.appendChild(lineChart('p99 latency', 'p99', 's', series('p99_ms', false).map(s => ({...s, points: s.points.map(([c, v]) => [c, v / 1000])})), true, 'clients (log scale)'));
    const table = el('table', {class: 'details', id: 'concurrency-table'},
      el('thead', {}, el('tr', {}, ['system', 'clients', 'QPS', 'p50', 'p99', 'not ok', 'engine cores', 'driver ceiling QPS'].map(c => el('th', {}, c)))),
      el('tbody', {}, runs.flatMap(r => r.concurrency.levels.map((l, i) => {
        const ceiling = r.concurrency.ceiling[i];
        return el('tr', {dataset: {key: r.key, clients: l.clients}}, el('td', {}, r.key), el('td', {class: 'num'}, l.clients),
          el('td', {class: 'num'}, l.qps === null ? (l.error || '-') : l.qps.toFixed(2)),
          el('td', {class: 'num'}, l.p50_ms === null ? '-' : fmtSeconds(l.p50_ms / 1000)),
          el('td', {class: 'num'}, l.p99_ms === null ? '-' : fmtSeconds(l.p99_ms / 1000)),
          el('td', {class: `num${l.not_ok ? ' bad' : ''}`}, `${l.not_ok} of ${l.queries}`),
          el('td', {class: 'num'}, l.cores === null || l.cores === undefined ? '-' : l.cores.toFixed(2)),
          el('td', {class: 'num'}, ceiling && ceiling.qps !== null ? fmtInt(Math.round(ceiling.qps)) : '-'));
      }))));
    clear(document.getElementById('concurrency-rows')).appendChild(table);
  }

  // ----- other workloads ----------------------------------------------------------------------

  function renderWorkload(id) {
    const box = clear(document.getElementById('view-workloads'));
    const w = WORKLOADS.find(x => `workload-${x.workload}` === id);
    if (!w) return;
    box.appendChild(el('h2', {}, `${w.workload}: ${w.rows.length} result${w.rows.length === 1 ? '' : 's'}`));
    box.appendChild(el('p', {class: 'note'}, 'The scalar fields of each result document, as recorded.'));
    // Charts a workload's section carries (the shapes workload: each metric against the swept
    // knob, one line per system/variant, its break point ringed in red).
    for (const c of (w.charts || [])) {
      box.appendChild(lineChart(c.title, c.metric, c.unit, c.series, c.log_y, c.x_label));
    }
    const table = el('table', {class: 'generic', dataset: {workload: w.workload}},
      el('thead', {}, el('tr', {}, el('th', {}, ''), w.columns.map(c => el('th', {}, c)))));
    const body = el('tbody', {});
    w.rows.forEach((row, i) => {
      const key = `${w.workload}:${i}`;
      const open = openDetails.has(key);
      body.appendChild(el('tr', {}, el('td', {}, el('button', {class: 'toggle', onclick: () => {
        if (open) openDetails.delete(key); else openDetails.add(key); render();
      }}, open ? '▾' : '▸')), row.map(v => el('td', {class: typeof v === 'number' ? 'num' : ''},
        v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v)))));
      if (open) {
        body.appendChild(el('tr', {class: 'details-row'}, el('td', {colSpan: w.columns.length + 1},
          el('pre', {}, JSON.stringify(w.docs[i], null, 1)))));
      }
    });
    table.appendChild(body);
    box.appendChild(table);
  }

  // ----- comparison (docbench compare --html) ---------------------------------------------------

  function fmtMeasure(value, unit) {
    if (value === null || value === undefined) return '-';
    if (unit === 'bytes') return fmtBytes(value);
    if (unit === 'bytes/document') return `${+value.toPrecision(4)} B`;
    if (unit === 's') return fmtSeconds(value);
    if (unit === 'ms') return `${value.toFixed(3)} ms`;
    return fmtInt(value);
  }

  function flagOf(m) {
    if (m.regression) return {cls: 'worse', text: m.contender === null ? '✗ failed' : '▲ worse'};
    if (m.flagged) return {cls: 'better', text: '▼ better'};
    if (m.beyond_threshold && m.noise_estimate) return {cls: 'noise', text: 'within noise'};
    return {cls: '', text: ''};
  }

  // As the terminal's noise column: each side's spread and the test's p; "no noise estimate"
  // for a time with fewer than 2 samples a side; empty for sizes and counts (exact).
  function noiseText(m) {
    if (!m.machine_bound || m.baseline === null || m.contender === null) return '';
    if (!m.noise_estimate || m.p_value === null || m.p_value === undefined) return 'no noise estimate';
    const spread = s => s === null || s === undefined ? '±?' : `±${(s * 100).toFixed(0)}%`;
    const p = m.p_value >= 0.01 ? `p=${m.p_value.toFixed(2)}` : 'p<0.01';
    return `${spread(m.baseline_spread)} ${spread(m.contender_spread)} ${p}`;
  }

  function comparePair(pair) {
    const tries = values => values.length > 1 ? `tries ${values.join(', ')}` : '';
    const body = el('tbody', {}, pair.metrics.map(m => {
      const flag = flagOf(m);
      return el('tr', {class: `metric-row ${flag.cls}`, dataset: {metric: m.metric, ratio: m.ratio === null ? '' : m.ratio,
        flag: flag.cls}},
      el('td', {class: 'name'}, m.label),
      el('td', {title: tries(m.baseline_tries)}, fmtMeasure(m.baseline, m.unit)),
      el('td', {title: tries(m.contender_tries)}, fmtMeasure(m.contender, m.unit)),
      el('td', {class: 'ratio'}, m.ratio === null ? '-' : fmtRatio(m.ratio)),
      el('td', {class: 'text noise'}, noiseText(m)),
      el('td', {class: `text flag ${flag.cls}`}, flag.text),
      el('td', {class: 'text'}, m.note));
    }));
    const head = el('thead', {}, el('tr', {}, ['figure', 'baseline', 'contender', 'ratio', 'noise', 'flag', 'note'].map(c => el('th', {}, c))));
    return el('section', {class: 'compare-pair', dataset: {pair: pair.name}},
      el('h2', {}, pair.name, ' ', el('span', {class: `badge ${pair.regressions ? 'bad' : 'warn'}`}, `${pair.flagged} flagged, ${pair.regressions} worse`)),
      el('p', {class: 'note'}, `baseline ${pair.baseline.path} (${pair.baseline.display_name || '?'} ${pair.baseline.version || ''}, ${pair.baseline.machine || '?'})`,
        el('br', {}), `contender ${pair.contender.path} (${pair.contender.display_name || '?'} ${pair.contender.version || ''}, ${pair.contender.machine || '?'})`),
      el('div', {class: 'table-wrap'}, el('table', {class: 'details compare'}, head, body)),
      pair.warnings.length ? el('ul', {class: 'warnings'}, pair.warnings.map(w => el('li', {dataset: {kind: w.kind}}, w.message))) : null);
  }

  function unmatchedList(title, items, text) {
    if (!items.length) return null;
    return el('details', {class: 'unmatched'}, el('summary', {}, `${title} (${items.length})`),
      el('ul', {}, items.map(i => el('li', {}, text(i)))));
  }

  function renderCompare() {
    const box = clear(document.getElementById('view-compare'));
    const c = COMPARISON;
    const t = c.threshold;
    const source = s => `${s.sources.join(', ')} (${s.results} results)`;
    box.append(el('p', {class: 'note'}, `Baseline: ${source(c.baseline)}`, el('br', {}), `Contender: ${source(c.contender)}`, el('br', {}),
      `Ratio = contender / baseline; flagged beyond ${+(t * 100).toFixed(6)}% (above ×${(1 + t).toFixed(2)} or below ×${(1 / (1 + t)).toFixed(2)})` +
      ': a size or count as is, a time only when its samples differ beyond the noise (Welch\'s t-test on log times, p < 0.05; ' +
      'a time with fewer than 2 samples a side has no noise estimate and is never flagged).'));
    const s = c.summary;
    box.append(el('p', {id: 'compare-summary'}, s.pairs ?
      `${s.pairs} pairs, ${s.ratios} ratios: ${s.flagged} flagged (${s.regressions} worse, ${s.improvements} better); ` +
      (s.no_noise_estimate ? `${s.no_noise_estimate} times beyond the threshold without a noise estimate (not flagged); ` : '') +
      `${s.warnings} warnings.` :
      'Nothing compared: no result of the contender has the identity of one of the baseline.'));
    for (const pair of c.pairs) box.append(comparePair(pair));
    const keyText = i => `${i.key.workload} ${i.key.system}/${i.key.variant}${i.key.cluster ? ` [${i.key.cluster}]` : ''} ${i.key.scale} — ${i.path}`;
    box.append(...[unmatchedList('Only in the baseline', c.only_baseline, keyText),
      unmatchedList('Only in the contender', c.only_contender, i => i.why ? `${i.why} — ${i.path}` : keyText(i)),
      unmatchedList('Not compared', c.not_compared, i => `${i.set}: ${i.name} (${i.path}): ${i.reason}`)].filter(Boolean));
  }

  // ----- render ---------------------------------------------------------------------------------

  function renderAnalytics() {
    const metric = state.metric;
    const runs = RUNS.filter(r => r.dataset === state.scale && isSelected(r.key));
    const nothing = document.getElementById('nothing-selected');
    const body = document.getElementById('analytics-body');
    nothing.hidden = runs.length > 0;
    body.hidden = runs.length === 0;
    if (!runs.length) return;
    const qs = selectedQueries();
    const best = METRIC[metric].perQuery ? bestPerQuery(runs, metric) : [null, null, null, null, null];
    const rows = summaryRows(runs, metric, best, qs);
    renderSummary(rows, metric, qs);
    queryChart(runs, metric, best, qs);
    document.getElementById('details-title').textContent =
      `Details: ${METRIC[metric].label.toLowerCase()}${METRIC[metric].perQuery ? ' per query, ratio to the best correct answer' : ''}`;
    renderDetails(rows, metric, best, qs);
  }

  function render() {
    if (!views().some(v => v.id === state.view)) state.view = views()[0].id;
    renderTabs();
    renderMeta();
    renderSelectors();
    for (const v of ['analytics', 'scaling', 'concurrency', 'ingest']) document.getElementById(`view-${v}`).hidden = state.view !== v;
    document.getElementById('view-workloads').hidden = !state.view.startsWith('workload-');
    document.getElementById('view-compare').hidden = state.view !== 'compare';
    if (!RUNS.length && state.view === 'analytics') {
      document.getElementById('nothing-selected').hidden = false;
      document.getElementById('nothing-selected').textContent = 'No analytics results in the result directories.';
      document.getElementById('analytics-body').hidden = true;
    } else if (state.view === 'analytics') renderAnalytics();
    else if (state.view === 'scaling') renderScaling();
    else if (state.view === 'concurrency') renderConcurrency();
    else if (state.view === 'ingest') renderIngest();
    else if (state.view === 'compare') renderCompare();
    else renderWorkload(state.view);
    document.body.dataset.ready = hashOf(state);
  }

  update();
})();
