import { z } from 'zod';
import * as logs from '../../shared/db/tables/logs.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { AppError } from '../../shared/errors.js';
import { logSchema, type Log } from '../../shared/models/index.js';
import { decodeLog } from '../knownEvents.js';
import { defineEndpoint } from './defineEndpoint.js';
import { hashInput, networkHolding, searchedNetworkInput } from './inputs.js';

/** A log with the name of its event when that event is a known one. */
export function withEventName(log: Log): Log {
  const name = decodeLog(log)?.name ?? null;
  return { ...log, event_name: name, eventName: name };
}

export const getUserOpLogs = defineEndpoint({
  summary: "The logs emitted during a user operation's execution, in order.",
  description: 'An unknown user operation is a 404. Logs of known events (token transfers, EntryPoint events) carry `event_name`.',
  tag: 'User Operations',
  input: z.object({ userOpHash: hashInput, network: searchedNetworkInput }),
  output: z.object({ logs: z.array(logSchema) }),
  cache: { finalWhen: ({ logs: found }, { network }) => found.slice(-1).map((l) => ({ network, blockNumber: l.blockNumber })) },
  async handler(ctx, input) {
    const network = await networkHolding(ctx, input.network, (n) => userOps.exists(ctx.db, n.chainId, input.userOpHash));
    if (!network) throw new AppError('NOT_FOUND', `No user operation ${input.userOpHash} on any indexed network`, { param: 'userOpHash' });
    const [op, found] = await Promise.all([
      userOps.exists(ctx.db, network.chainId, input.userOpHash),
      logs.listByUserOp(ctx.db, network.chainId, input.userOpHash),
    ]);
    if (!op) throw new AppError('NOT_FOUND', `No user operation ${input.userOpHash} on ${network.name}`, { param: 'userOpHash' });
    return { logs: found.map(withEventName) };
  },
});
