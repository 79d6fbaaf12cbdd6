import type { Queryable } from '../client.js';

/** Reads of `user_op_traces`: each op's callTracer subtree, or why there is none. */

/** A geth callTracer frame as stored. */
export type CallFrame = {
  type?: string;
  from?: string;
  to?: string;
  input?: string;
  output?: string;
  gas?: string;
  gasUsed?: string;
  value?: string;
  calls?: CallFrame[];
};

export type UserOpTrace = { status: 'ok' | 'unavailable'; trace: CallFrame | null };

export async function find(db: Queryable, chainId: number, userOpHash: string): Promise<UserOpTrace | null> {
  const { rows } = await db.query<{ status: 'ok' | 'unavailable'; trace: CallFrame | null }>(
    `select status, trace from user_op_traces where chain_id = $1 and user_op_hash = $2`,
    [chainId, userOpHash],
  );
  return rows[0] ? { status: rows[0].status, trace: rows[0].trace } : null;
}
