// The status page: polls the keyless getStatusSummary endpoint and draws each network.
// Plain browser JavaScript, no build step; uPlot (window.uPlot) draws the chart.
'use strict';

const REFRESH_MS = 5000;
const charts = new Map(); // network -> { plot, key }

const $ = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') el.className = v;
    else el.setAttribute(k, v);
  }
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
};

const short = (hex) => (hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex);
const ago = (unixSeconds) => {
  const s = Math.max(0, Math.round(Date.now() / 1000 - Number(unixSeconds)));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
};
const eth = (wei) => Number(BigInt(wei ?? '0')) / 1e18;
const number = (n) => Number(n).toLocaleString('en-US');

function position(n) {
  const item = (label, value, id) => $('div', id ? { 'data-field': id } : {}, $('dt', {}, label), $('dd', {}, value));
  const progress = $('progress', { max: '1', value: String(n.backfillProgress) });
  const backfill = n.backfillComplete ? 'complete' : `${(n.backfillProgress * 100).toFixed(1)}%`;
  return $(
    'dl',
    { class: 'position' },
    item('head', number(n.headBlock), 'head'),
    item('indexed block', number(n.indexedBlock), 'indexed'),
    item('lag', `${number(n.lagBlocks)} blocks`, 'lag'),
    $('div', { 'data-field': 'backfill' }, $('dt', {}, 'backfill'), $('dd', {}, backfill), progress),
  );
}

function opsTable(n) {
  const q = (params) => new URLSearchParams({ network: n.network, ...params }).toString();
  if (n.latestUserOps.length === 0) return $('p', { class: 'empty' }, 'No user operations indexed yet.');
  return $(
    'div',
    { class: 'scroll' },
    $(
      'table',
      { 'data-list': 'userOps' },
      $(
        'thead',
        {},
        $(
          'tr',
          {},
          $('th', {}, 'user op'),
          $('th', {}, 'sender'),
          $('th', {}, 'account'),
          $('th', {}, 'block'),
          $('th', {}, 'when'),
          $('th', {}, 'result'),
        ),
      ),
      $(
        'tbody',
        {},
        ...n.latestUserOps.map((op) =>
          $(
            'tr',
            {},
            $(
              'td',
              { class: 'hash' },
              $('a', { href: `/v0/getUserOp?${q({ hash: op.userOpHash })}`, title: op.userOpHash }, short(op.userOpHash)),
            ),
            $('td', { class: 'hash', title: op.sender }, short(op.sender)),
            $('td', { 'data-field': 'account' }, `${op.account} · EntryPoint ${op.entryPointVersion}`),
            $('td', {}, number(op.blockNumber)),
            $('td', {}, ago(op.blockTime)),
            $('td', { class: op.success ? 'ok' : 'bad' }, op.success ? 'success' : 'reverted'),
          ),
        ),
      ),
    ),
  );
}

function bundlesTable(n) {
  const q = (params) => new URLSearchParams({ network: n.network, ...params }).toString();
  if (n.latestBundles.length === 0) return $('p', { class: 'empty' }, 'No bundles indexed yet.');
  return $(
    'div',
    { class: 'scroll' },
    $(
      'table',
      { 'data-list': 'bundles' },
      $('thead', {}, $('tr', {}, $('th', {}, 'bundle'), $('th', {}, 'ops'), $('th', {}, 'bundler'), $('th', {}, 'when'))),
      $(
        'tbody',
        {},
        ...n.latestBundles.map((b) =>
          $(
            'tr',
            {},
            $(
              'td',
              { class: 'hash' },
              $(
                'a',
                { href: `/v0/getBundleActivity?${q({ bundle: b.transactionHash })}`, title: b.transactionHash },
                short(b.transactionHash),
              ),
            ),
            $('td', {}, b.userOpsLength),
            $('td', { class: 'hash', title: b.from }, short(b.from)),
            $('td', {}, ago(b.blockTime)),
          ),
        ),
      ),
    ),
  );
}

function drawChart(n, holder) {
  const days = [...n.dailyMetrics].sort((a, b) => Number(a.daySinceEpoch) - Number(b.daySinceEpoch));
  const data = [
    days.map((d) => Number(d.daySinceEpoch) * 86400),
    days.map((d) => Number(d.userOpsDaily)),
    days.map((d) => Number(d.activeWalletsDaily)),
    days.map((d) => eth(d.gasCostCollectedDaily)),
  ];
  const key = JSON.stringify(data);
  const width = Math.max(280, holder.clientWidth);
  const existing = charts.get(n.network);
  if (existing && existing.key === key && holder.contains(existing.plot.root)) return;
  if (existing) existing.plot.destroy();
  holder.replaceChildren();
  if (days.length === 0) {
    holder.append($('p', { class: 'empty' }, 'No daily metrics yet.'));
    charts.delete(n.network);
    return;
  }
  const plot = new window.uPlot(
    {
      width,
      height: 220,
      scales: { x: { time: true }, count: {}, gas: {} },
      series: [
        {},
        { label: 'user ops', scale: 'count', stroke: '#3559c7', width: 2, points: { show: days.length < 3 } },
        { label: 'active wallets', scale: 'count', stroke: '#1f9d55', width: 2, points: { show: days.length < 3 } },
        {
          label: 'gas collected (ETH)',
          scale: 'gas',
          stroke: '#d97706',
          width: 2,
          points: { show: days.length < 3 },
          value: (_u, v) => (v == null ? '–' : v.toFixed(6)),
        },
      ],
      axes: [{}, { scale: 'count', label: 'per day' }, { scale: 'gas', side: 1, label: 'ETH', grid: { show: false } }],
    },
    data,
    holder,
  );
  charts.set(n.network, { plot, key });
}

function render(summary) {
  const main = document.getElementById('networks');
  if (summary.networks.length === 0) {
    main.replaceChildren($('p', { class: 'empty' }, 'No network is configured.'));
    return;
  }
  const first = summary.networks[0].network;
  document.getElementById('graphql-link').setAttribute('href', `/subgraphs/name/${encodeURIComponent(first)}`);
  // Sections are kept between refreshes so the charts are not rebuilt when nothing changed.
  for (const n of summary.networks) {
    let section = main.querySelector(`section[data-network="${CSS.escape(n.network)}"]`);
    if (!section) {
      main.querySelector('.loading')?.remove();
      section = $(
        'section',
        { class: 'network', 'data-network': n.network },
        $('h2', {}, `${n.network} `, $('small', {}, `chain ${n.chainId}`)),
        $('div', { class: 'position-holder' }),
        $(
          'div',
          { class: 'lists' },
          $('div', {}, $('h3', {}, 'Latest user operations'), $('div', { class: 'ops' })),
          $('div', {}, $('h3', {}, 'Latest bundles'), $('div', { class: 'bundles' })),
        ),
        $('h3', {}, 'Last 30 days: user ops, active wallets, gas collected'),
        $('div', { class: 'chart' }),
      );
      main.append(section);
    }
    section.querySelector('.position-holder').replaceChildren(position(n));
    section.querySelector('.ops').replaceChildren(opsTable(n));
    section.querySelector('.bundles').replaceChildren(bundlesTable(n));
    drawChart(n, section.querySelector('.chart'));
  }
}

async function refresh() {
  const error = document.getElementById('error');
  try {
    const res = await fetch('/v0/getStatusSummary', { headers: { accept: 'application/json' } });
    const body = await res.json();
    if (!res.ok) throw new Error(body.message || `HTTP ${res.status}`);
    render(body);
    error.hidden = true;
    document.getElementById('updated').textContent = `Updated ${new Date().toLocaleTimeString()}.`;
  } catch (err) {
    error.textContent = `Could not refresh: ${err.message}`;
    error.hidden = false;
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

window.addEventListener('resize', () => {
  for (const { plot } of charts.values()) plot.setSize({ width: Math.max(280, plot.root.parentElement.clientWidth), height: 220 });
});
refresh();
