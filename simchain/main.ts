/**
 * npm run simchain -- --profile base --from-block 25000000 [--blocks K] [--block-time-ms MS | --fast --to-block N]
 *   [--plan unlimited|infura|alchemy|quicknode|public|tiny] [--rtt MS] [--accounts N] [--seed S] [--port P]
 * Prints the URLs it serves and runs until killed.
 */
import { parseArgs } from 'node:util';

const say = (text: string): boolean => process.stdout.write(`${text}\n`);
const complain = (text: string): boolean => process.stderr.write(`${text}\n`);
import { PLANS } from './plans.js';
import { PROFILE_NAMES } from './profiles.js';
import { startSimChain } from './server.js';

const USAGE = `usage: npm run simchain -- [options]
  --profile NAME       ${PROFILE_NAMES.join(', ')} (aliases: polygon, arbitrum); default base
  --from-block N       first block served as the head (default: the profile's height)
  --blocks K           blocks available at start (head = from-block + K - 1); default 1
  --block-time-ms MS   head advances every MS (default: the profile's block time; 0: fixed head)
  --fast               same as --block-time-ms 0
  --to-block N         with a fixed head: the head
  --plan NAME          ${Object.keys(PLANS).join(', ')}; default unlimited
  --rtt MS             round-trip time added to every HTTP request (a hosted node's distance); default 0
  --accounts N         established smart accounts (default: the profile's)
  --seed S             chain seed (default 1)
  --port P             0 for a free port (default 8545)
  --no-log-timestamps  logs without blockTimestamp (as older nodes answer)`;

const integer = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) {
    complain(`--${name}: a non-negative integer expected, got "${value}"\n${USAGE}`);
    process.exit(2);
  }
  return n;
};

let values: Record<string, string | boolean | undefined>;
try {
  values = parseArgs({
    options: {
      profile: { type: 'string' },
      'from-block': { type: 'string' },
      blocks: { type: 'string' },
      'block-time-ms': { type: 'string' },
      fast: { type: 'boolean' },
      'to-block': { type: 'string' },
      plan: { type: 'string' },
      rtt: { type: 'string' },
      accounts: { type: 'string' },
      seed: { type: 'string' },
      port: { type: 'string' },
      'no-log-timestamps': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  }).values;
} catch (err) {
  complain(`${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  say(USAGE);
  process.exit(0);
}
const str = (k: string): string | undefined => values[k] as string | undefined;

try {
  const chain = await startSimChain({
    profile: str('profile') ?? 'base',
    fromBlock: integer('from-block', str('from-block')),
    blocks: integer('blocks', str('blocks')),
    toBlock: integer('to-block', str('to-block')),
    blockTimeMs: values.fast ? 0 : integer('block-time-ms', str('block-time-ms')),
    plan: str('plan'),
    rttMs: integer('rtt', str('rtt')),
    accounts: integer('accounts', str('accounts')),
    seed: integer('seed', str('seed')),
    port: integer('port', str('port')) ?? 8545,
    logTimestamps: !values['no-log-timestamps'],
  });
  say(`simchain ${chain.profile.name} (chain id ${chain.chainId}), head ${chain.head()}`);
  say(chain.url);
  say(chain.wsUrl);
  const stop = (): void => void chain.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  complain(`simchain: ${(err as Error).message}`);
  process.exit(1);
}
