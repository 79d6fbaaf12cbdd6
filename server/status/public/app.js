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

/** Why the indexer cannot write this network's next blocks, while it cannot (nothing otherwise). */
function writeFailure(n) {
  const f = n.writeFailure;
  if (!f) return [];
  const blocks = f.toBlock > f.fromBlock ? `blocks ${number(f.fromBlock)}–${number(f.toBlock)}` : `block ${number(f.fromBlock)}`;
  const attempts = `${number(f.attempts)} attempt${f.attempts === 1 ? '' : 's'} since ${new Date(f.since).toLocaleString()}`;
  return [
    $('p', { class: 'error', 'data-field': 'writeFailure' }, `Indexing is held: ${blocks} cannot be written (${attempts}): ${f.reason}`),
  ];
}

/** Gives each body cell its column's name (data-label): a narrow screen shows a row as labelled lines. */
function labelled(table) {
  const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
  for (const row of table.querySelectorAll('tbody tr')) [...row.children].forEach((td, i) => td.setAttribute('data-label', names[i]));
  return table;
}

function opsTable(n) {
  const q = (params) => new URLSearchParams({ network: n.network, ...params }).toString();
  if (n.latestUserOps.length === 0) return $('p', { class: 'empty' }, 'No user operations indexed yet.');
  return $(
    'div',
    { class: 'scroll' },
    labelled(
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
              $(
                'td',
                { class: op.success ? 'ok' : 'bad', 'data-field': 'result' },
                op.success ? 'success' : op.failure ? `reverted: ${op.failure}` : 'reverted',
              ),
            ),
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
    labelled(
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
          $('div', { class: 'ops-list' }, $('h3', {}, 'Latest user operations'), $('div', { class: 'ops' })),
          $('div', {}, $('h3', {}, 'Latest bundles'), $('div', { class: 'bundles' })),
        ),
        $('h3', {}, 'Last 30 days: user ops, active wallets, gas collected'),
        $('div', { class: 'chart' }),
      );
      main.append(section);
    }
    section.querySelector('.position-holder').replaceChildren(position(n), ...writeFailure(n));
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

// The operator's usage chart: only with the admin token, which the operator types in; it is kept in
// this tab's sessionStorage and sent to /admin/v1/usage alone.
const TOKEN_KEY = 'opscanAdminToken';
const USAGE_REFRESH_MS = 30000;
const USAGE_HOURS = 48;
let usageChart = null; // { plot, key }

function clearUsage(message) {
  usageChart?.plot.destroy();
  usageChart = null;
  document.getElementById('usage-chart').replaceChildren();
  document.getElementById('usage').hidden = true;
  const error = document.getElementById('usage-error');
  error.textContent = message ?? '';
  error.hidden = !message;
  document.getElementById('admin-forget').hidden = !window.sessionStorage.getItem(TOKEN_KEY);
}

function drawUsage(usage) {
  const holder = document.getElementById('usage-chart');
  const start = Math.floor(Date.parse(usage.from) / 3600000) * 3600;
  const hours = Array.from({ length: USAGE_HOURS + 1 }, (_, i) => start + i * 3600);
  const keys = [...new Map(usage.rows.map((r) => [r.key.id, r.key])).values()];
  const series = keys.map((k) => {
    const counts = hours.map(() => 0);
    for (const r of usage.rows) if (r.key.id === k.id) counts[(Date.parse(r.period) / 1000 - start) / 3600] = r.requests;
    return counts;
  });
  const data = [hours, ...series];
  const key = JSON.stringify([keys, data]);
  document.getElementById('usage').hidden = false;
  if (usageChart && usageChart.key === key) return;
  usageChart?.plot.destroy();
  holder.replaceChildren();
  if (keys.length === 0) {
    holder.append($('p', { class: 'empty' }, 'No requests counted in the last 48 hours.'));
    usageChart = null;
    return;
  }
  const colours = ['#3559c7', '#1f9d55', '#d97706', '#b42318', '#7c3aed'];
  const plot = new window.uPlot(
    {
      width: Math.max(280, holder.clientWidth),
      height: 220,
      scales: { x: { time: true } },
      series: [
        {},
        ...keys.map((k, i) => ({
          label: `${k.name} (${k.prefix})`,
          stroke: colours[i % colours.length],
          width: 2,
          points: { show: false },
        })),
      ],
      axes: [{}, { label: 'requests per hour' }],
    },
    data,
    holder,
  );
  usageChart = { plot, key };
}

async function refreshUsage() {
  const token = window.sessionStorage.getItem(TOKEN_KEY);
  if (!token) return clearUsage();
  try {
    const query = new URLSearchParams({ groupBy: 'hour', days: String(USAGE_HOURS / 24), limit: '5' });
    const res = await fetch(`/admin/v1/usage?${query}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    const body = await res.json().catch(() => ({}));
    if (res.status === 401 || res.status === 404) {
      window.sessionStorage.removeItem(TOKEN_KEY);
      return clearUsage(res.status === 404 ? 'The admin API is off (ADMIN_TOKEN is not set).' : 'The admin token was refused.');
    }
    if (!res.ok) throw new Error(body.message || `HTTP ${res.status}`);
    document.getElementById('usage-error').hidden = true;
    document.getElementById('admin-forget').hidden = false;
    drawUsage(body);
  } catch (err) {
    const error = document.getElementById('usage-error');
    error.textContent = `Could not read usage: ${err.message}`;
    error.hidden = false;
  }
}

document.getElementById('admin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('admin-token');
  if (input.value.trim()) window.sessionStorage.setItem(TOKEN_KEY, input.value.trim());
  input.value = '';
  refreshUsage();
});
document.getElementById('admin-forget').addEventListener('click', () => {
  window.sessionStorage.removeItem(TOKEN_KEY);
  clearUsage();
});

window.addEventListener('resize', () => {
  const plots = [...[...charts.values()].map((c) => c.plot), ...(usageChart ? [usageChart.plot] : [])];
  for (const plot of plots) plot.setSize({ width: Math.max(280, plot.root.parentElement.clientWidth), height: 220 });
});
refresh();
refreshUsage();
window.setInterval(refreshUsage, USAGE_REFRESH_MS);
