// The query page of the subgraph-style GraphQL endpoint, served at the endpoint's own URL to a browser
// (as graph-node serves GraphiQL). Plain browser JavaScript, no build step and nothing fetched from another
// host: a query and its variables are posted to this page's URL, the answer shown as JSON, the schema's
// types listed from introspection.
/* global window, document, fetch, localStorage, performance, URL, Node */
'use strict';

const endpoint = window.location.pathname.replace(/\/+$/, '');
// `/api/<key>/subgraphs/name/<network>`: the key is in the path, as The Graph's gateway takes it.
const keyInPath = /^\/api\/[^/]+\/subgraphs\//.test(endpoint);
const network = decodeURIComponent(endpoint.split('/').pop() ?? '');
const stored = (name) => `opscan-graphql:${network}:${name}`;

const EXAMPLE = `# The indexed head, and the latest ops
{
  _meta { block { number hash timestamp } deployment hasIndexingErrors }
  userOps(first: 5, orderBy: blockNumber, orderDirection: desc) {
    id sender success actualGasCost blockNumber transactionHash
  }
}

# Ops, bundles and deposits can be read as of an earlier block:
#   userOps(block: { number: 123 }) { id }
# and any query can wait for the indexer: block: { number_gte: 123 }
`;

const $ = (id) => document.getElementById(id);
const el = (tag, text, attrs = {}) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.append(text instanceof Node ? text : document.createTextNode(String(text)));
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};

$('network').textContent = `· ${network}`;
$('schema-link').href = `${endpoint.replace(/^\/api\/[^/]+/, '')}/schema.graphql`;
$('key-row').hidden = keyInPath;
$('key').value = localStorage.getItem('opscan-graphql:key') ?? '';
$('query').value = localStorage.getItem(stored('query')) ?? EXAMPLE;
$('variables').value = localStorage.getItem(stored('variables')) ?? '';

/** Posts a query to this endpoint; the parsed answer and its HTTP status. */
async function post(query, variables) {
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const key = $('key').value.trim();
  if (!keyInPath && key) headers['x-api-key'] = key;
  const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

function variablesOrError() {
  const text = $('variables').value.trim();
  if (!text) return { variables: undefined };
  try {
    return { variables: JSON.parse(text) };
  } catch (error) {
    return { error: `Variables are not JSON: ${error.message}` };
  }
}

async function run() {
  const query = $('query').value;
  localStorage.setItem(stored('query'), query);
  localStorage.setItem(stored('variables'), $('variables').value);
  localStorage.setItem('opscan-graphql:key', $('key').value.trim());
  const { variables, error } = variablesOrError();
  if (error) {
    $('status').textContent = '';
    $('result').textContent = error;
    return;
  }
  $('status').textContent = '…';
  const started = performance.now();
  try {
    const { status, body } = await post(query, variables);
    $('status').textContent = `HTTP ${status}, ${Math.round(performance.now() - started)} ms`;
    $('result').textContent = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
    if (status === 200 && !typesLoaded) void loadTypes();
  } catch (err) {
    $('status').textContent = '';
    $('result').textContent = `The request failed: ${err.message}`;
  }
}

const INTROSPECTION = `{ __schema { queryType { name } types { name kind description
  fields { name description args { name type { ...T } } type { ...T } }
  inputFields { name type { ...T } } enumValues { name } } } }
  fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`;

const typeName = (t) => (t.kind === 'NON_NULL' ? `${typeName(t.ofType)}!` : t.kind === 'LIST' ? `[${typeName(t.ofType)}]` : t.name);
let typesLoaded = false;
let types = new Map();

function showType(name) {
  const type = types.get(name);
  const detail = $('type-detail');
  detail.replaceChildren(el('h2', `${type.kind === 'INPUT_OBJECT' ? 'input' : type.kind.toLowerCase()} ${name}`));
  if (type.description) detail.append(el('p', type.description, { class: 'note' }));
  const list = el('dl');
  for (const field of type.fields ?? type.inputFields ?? []) {
    const args = field.args?.length ? `(${field.args.map((a) => `${a.name}: ${typeName(a.type)}`).join(', ')})` : '';
    list.append(el('dt', `${field.name}${args}: ${typeName(field.type)}`));
    if (field.description) list.append(el('dd', field.description));
  }
  for (const value of type.enumValues ?? []) list.append(el('dt', value.name));
  detail.append(list);
}

async function loadTypes() {
  const { status, body } = await post(INTROSPECTION);
  if (status !== 200 || !body?.data) {
    $('types-note').textContent = `Introspection answered HTTP ${status}: ${body?.errors?.[0]?.message ?? 'no data'}`;
    return;
  }
  typesLoaded = true;
  const schema = body.data.__schema;
  types = new Map(schema.types.filter((t) => !t.name.startsWith('__')).map((t) => [t.name, t]));
  $('types-note').textContent = 'Query is the entry point; every collection takes first, skip, orderBy, orderDirection, where and block.';
  const names = [schema.queryType.name, ...[...types.keys()].filter((n) => n !== schema.queryType.name).sort()];
  $('type-list').replaceChildren(
    ...names.map((name) => {
      const button = el('button', name, { type: 'button' });
      button.addEventListener('click', () => showType(name));
      return el('li', button);
    }),
  );
  showType(schema.queryType.name);
}

$('query-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void run();
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    void run();
  }
});
$('get-link').addEventListener('click', (event) => {
  const url = new URL(endpoint, window.location.origin);
  url.searchParams.set('query', $('query').value);
  if ($('variables').value.trim()) url.searchParams.set('variables', $('variables').value.trim());
  event.currentTarget.href = url.toString();
});
if (keyInPath || $('key').value) void loadTypes();
