// The query page of the subgraph-style GraphQL endpoint, served at the endpoint's own URL to a browser
// as graph-node serves GraphiQL: GraphiQL 3 with its explorer plugin (their UMD builds, served by this
// server; nothing is fetched from another host). The API key typed above it is sent as `x-api-key`
// with every request (and shown in GraphiQL's headers); GraphiQL introspects the schema with it, which
// gives the explorer, the docs pane and autocompletion.
/* global window, document, localStorage, setTimeout, clearTimeout, React, ReactDOM, GraphiQL, GraphiQLPluginExplorer */
'use strict';

const endpoint = window.location.pathname.replace(/\/+$/, '');
// `/api/<key>/subgraphs/name/<network>`: the key is in the path, as The Graph's gateway takes it.
const keyInPath = /^\/api\/[^/]+\/subgraphs\//.test(endpoint);
const network = decodeURIComponent(endpoint.split('/').pop() ?? '');
const KEY_ITEM = 'opscan-graphql:key';

// The spec's sample query, with the newest op's hash filled in once a key is set.
const DEFAULT_QUERY = `# The spec's sample: an op by its hash (set userOpHash in Variables below).
# Ctrl-Space completes fields; the explorer (left) builds queries by clicking.
query GetUserOpHash($userOpHash: Bytes) {
  userOps(where: { userOpHash: $userOpHash }) {
    verificationGasLimit
    userOpHash
    transactionHash
  }
}
`;

const $ = (id) => document.getElementById(id);
$('network').textContent = `· ${network}`;
$('schema-link').href = `${endpoint.replace(/^\/api\/[^/]+/, '')}/schema.graphql`;
$('key-row').hidden = keyInPath;
$('key').value = localStorage.getItem(KEY_ITEM) ?? '';

const apiKey = () => (keyInPath ? '' : $('key').value.trim());
const keyHeaders = () => (apiKey() ? { 'x-api-key': apiKey() } : {});

/** The newest op's hash, for the sample's variables (null when there is none or no key yet). */
async function newestOpHash() {
  const res = await window.fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...keyHeaders() },
    body: JSON.stringify({ query: '{ userOps(first: 1, orderBy: blockNumber, orderDirection: desc) { userOpHash } }' }),
  });
  if (!res.ok) return null;
  const body = await res.json();
  return body?.data?.userOps?.[0]?.userOpHash ?? null;
}

const explorer = GraphiQLPluginExplorer.explorerPlugin();
const root = ReactDOM.createRoot($('graphiql'));

/** GraphiQL for the current key: mounted anew when the key changes, so it introspects with it. */
async function render() {
  const key = apiKey();
  const fetcher = GraphiQL.createFetcher({ url: endpoint, headers: keyHeaders() });
  const hash = key || keyInPath ? await newestOpHash().catch(() => null) : null;
  root.render(
    React.createElement(GraphiQL, {
      key: key || 'no key',
      fetcher,
      plugins: [explorer],
      defaultQuery: DEFAULT_QUERY,
      defaultEditorToolsVisibility: true,
      variables: localStorage.getItem('graphiql:variables') || (hash ? JSON.stringify({ userOpHash: hash }, null, 2) : undefined),
      headers: key ? JSON.stringify({ 'x-api-key': key }, null, 2) : undefined,
    }),
  );
}

let typing;
$('key').addEventListener('input', () => {
  localStorage.setItem(KEY_ITEM, apiKey());
  clearTimeout(typing);
  typing = setTimeout(() => void render(), 400);
});
void render();
