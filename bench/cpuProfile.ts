/**
 * Where a process's CPU went, from the `.cpuprofile` files `node --cpu-prof` writes (one per
 * thread: the indexer's main thread and each network's worker). Every sample is charged to the
 * first frame, from the sampled function up its callers, that belongs to a known kind of work (a
 * JSON.parse, a pg driver frame, a file of indexer/decode …): a keccak inside ethers called from
 * the decoder is decoding, the same keccak called from nameAccounts.ts is naming. V8's own
 * (garbage collector), (program) and (idle) nodes are kept apart.
 *
 * `npx tsx bench/cpuProfile.ts DIR` prints the summary of the profiles in DIR; `npm run bench -- peer`
 * with BENCH_PEER_PROFILE=1 writes and summarizes them for one backfill (bench/peer.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
};
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

/** The kinds of work, tried in order on each frame; the first that matches names the frame's work. */
const KINDS: ReadonlyArray<[string, (frame: ProfileNode['callFrame']) => boolean]> = [
  ['gc', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
  ['program', (f) => f.functionName === '(program)'],
  // JSON.parse is a builtin the profile folds into its caller: RpcClient's post() parses each answer.
  [
    'parse (JSON of responses)',
    (f) => (f.url === '' && f.functionName === 'parse') || (f.functionName === 'post' && /rpcClient/.test(f.url)),
  ],
  [
    'thread messages',
    (f) => f.functionName === 'postMessage' || /networkWorker|supervisor\.js|worker_threads|internal\/worker/.test(f.url),
  ],
  ['pg driver', (f) => /node_modules\/(pg|pg-protocol|pg-copy-streams|pg-types|pg-pool)\//.test(f.url)],
  [
    'transfers',
    (f) => /indexer\/(decode\/transfers|sync\/(backfillTransfers|describeTokens|knownAddressSet|addressBloomFilter))/.test(f.url),
  ],
  ['naming', (f) => /indexer\/sync\/nameAccounts/.test(f.url)],
  ['decode', (f) => /indexer\/decode\//.test(f.url)],
  ['SQL building', (f) => /shared\/db\/|indexer\/persist\//.test(f.url)],
  [
    'fetch (HTTP, RPC client)',
    (f) =>
      /node_modules\/undici|internal\/deps\/undici|node:_http_|indexer\/sync\/(jsonRpcHttp|rpcClient|fetchLogs|fetchRange|callRateLimiter)/.test(
        f.url,
      ),
  ],
  ['logging', (f) => /node_modules\/(pino|sonic-boom|thread-stream)/.test(f.url)],
  ['sync loop', (f) => /indexer\/(sync|runNetwork|index|main)/.test(f.url)],
];

export type ProfileSummary = {
  /** Per thread (the profile file's name) and kind: CPU seconds. */
  threads: Array<{ file: string; seconds: number; byKind: Record<string, number> }>;
  /** Every thread added up, idle left out. */
  total: { seconds: number; byKind: Record<string, number>; share: Record<string, number> };
  /** The functions whose samples no kind claimed, by self time (seconds): where to look for a kind missing. */
  topOther: Record<string, number>;
};

/** Seconds by kind of work of the samples inside `window` (µs on the monotonic clock), and the functions of `other` by self time. */
function summarizeProfile(
  profile: CpuProfile,
  window?: [number, number],
): { byKind: Record<string, number>; other: Record<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const kindOf = new Map<number, string>();
  const kindOfNode = (id: number): string => {
    const known = kindOf.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    const own = KINDS.find(([, matches]) => matches(frame))?.[0];
    const up = parent.get(id);
    const kind = own ?? (up === undefined ? 'other' : kindOfNode(up));
    kindOf.set(id, kind);
    return kind;
  };
  const seconds: Record<string, number> = {};
  const other: Record<string, number> = {};
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window[0] || at > window[1])) return;
    const kind = kindOfNode(id);
    seconds[kind] = (seconds[kind] ?? 0) + delta / 1e6;
    if (kind === 'other') {
      const { functionName, url } = byId.get(id)!.callFrame;
      const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/bench\/out\/build-[^/]+\//, '')}`;
      other[name] = (other[name] ?? 0) + delta / 1e6;
    }
  });
  return { byKind: seconds, other };
}

/**
 * The profiles in `dir`, each cut to `window` when given (the backfill's timed span, µs on the
 * monotonic clock: the process's start and its migrations left out).
 */
export function summarizeCpuProfiles(dir: string, window?: [number, number]): ProfileSummary {
  const others: Record<string, number> = {};
  const threads = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((file) => {
      const { byKind, other } = summarizeProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, window);
      for (const [name, s] of Object.entries(other)) others[name] = (others[name] ?? 0) + s;
      delete byKind.idle;
      const rounded = Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, Number(v.toFixed(2))]));
      return {
        file,
        seconds: Number(
          Object.values(byKind)
            .reduce((a, b) => a + b, 0)
            .toFixed(2),
        ),
        byKind: rounded,
      };
    });
  const byKind: Record<string, number> = {};
  for (const t of threads) for (const [k, v] of Object.entries(t.byKind)) byKind[k] = Number(((byKind[k] ?? 0) + v).toFixed(2));
  const seconds = Object.values(byKind).reduce((a, b) => a + b, 0);
  const share = Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, Number((v / seconds).toFixed(3))]));
  const topOther = Object.fromEntries(
    Object.entries(others)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([name, s]) => [name, Number(s.toFixed(3))]),
  );
  return { threads, total: { seconds: Number(seconds.toFixed(2)), byKind, share }, topOther };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: tsx bench/cpuProfile.ts DIR (a folder of .cpuprofile files)');
    process.exit(2);
  }
  console.log(JSON.stringify(summarizeCpuProfiles(dir), null, 2));
}
