import { z } from 'zod';
import * as tokenTransfers from '../../shared/db/tables/tokenTransfers.js';
import {
  accountDetailSchema,
  addressOut,
  balanceSchema,
  blockActivitySchema,
  bundleDetailsSchema,
  bundlerDetailsSchema,
  bundlerUserOpSchema,
  dailyMetricSchema,
  decimalString,
  erc20TransferSchema,
  hexSchema,
  logSchema,
  nftTransferSchema,
  paymasterDetailSchema,
  searchResultSchema,
  transactionSchema,
  traceDataSchema,
  userOpMetadataSchema,
  userOpSchema,
  decodedArgumentSchema,
  type Balance,
  type Log,
  type SearchResult,
  type SearchType,
  type TraceNode,
  type UserOp,
} from '../../shared/models/index.js';
import type { Ctx } from '../context.js';
import { SELF_CALLS_SELECTOR, accountMethod, decodeAccountCalls } from '../../shared/calldata/accountCalls.js';
import { decodeCall } from '../knownCalls.js';
import { decodeLog } from '../knownEvents.js';
import { presentation, type Dialect } from './dialect.js';

/**
 * The live JiffyScan API's shapes, served at `/jiffyscan/v0`
 * so that its explorer web app and SDK work by changing their base URL. Each function below maps
 * one spec shape to the live one; the spec answer is computed (and cached) exactly as for `/v0`.
 *
 * The differences: a user op's `target`, `value` and `callData` are arrays (the explorer renders
 * `target.map(...)`), with `actualGasPrice` and the mempool sighting times (unknown here: null);
 * the address endpoints answer object envelopes instead of top-level arrays; daily metrics also
 * under the SDK's `matrics`; logs carry their decoded topics and data; getUserOp items list the
 * op's token transfers, as the user-op page shows them.
 */

// User operations.

const transferParty = {
  contractAddress: addressOut,
  from: addressOut,
  to: addressOut,
  name: z.string().nullable(),
  symbol: z.string().nullable(),
};

export const liveUserOpSchema = userOpSchema
  .extend({
    /** One entry per account call (execute / executeBatch / ERC-7579); see liveCalls. */
    target: z.array(addressOut),
    value: z.array(decimalString),
    callData: z.array(hexSchema),
    /** Wei paid per unit of gas (actualGasCost / actualGasUsed). */
    actualGasPrice: decimalString.nullable(),
    /** When a mempool first saw the op: opscan indexes mined ops only, so never known. */
    timeSeenInAltMempool: z.null(),
    timeSeenInMainMempool: z.null(),
  })
  .meta({ id: 'JiffyscanUserOp' });
export type LiveUserOp = z.infer<typeof liveUserOpSchema>;

/** A getUserOp item: the op and the token transfers made during it. */
const liveUserOpWithTransfersSchema = liveUserOpSchema
  .extend({
    erc20Transfers: z.array(z.object({ ...transferParty, value: decimalString, decimals: decimalString.nullable() })),
    erc721Transfers: z.array(z.object({ ...transferParty, tokenId: decimalString, decimals: z.null() })),
  })
  .meta({ id: 'JiffyscanUserOpWithTransfers' });

/**
 * The op's calls as the live API listed them: one entry per decoded account call. An op whose
 * callData is not an account call opscan decodes makes one call it knows of, the EntryPoint calling
 * the sender with that callData and no value; an op whose callData is not decoded yet has none.
 */
function liveCalls(op: UserOp): Pick<LiveUserOp, 'target' | 'value' | 'callData'> {
  if (op.targets.length > 0) return { target: op.targets, value: op.values, callData: op.callDatas };
  if (op.signature === null) return { target: [], value: [], callData: [] };
  return { target: [op.sender], value: ['0'], callData: [op.preDecodedCallData] };
}

export function liveUserOp(op: UserOp): LiveUserOp {
  const gasUsed = op.actualGasUsed === null ? 0n : BigInt(op.actualGasUsed);
  return {
    ...op,
    ...liveCalls(op),
    actualGasPrice: gasUsed > 0n && op.actualGasCost !== null ? (BigInt(op.actualGasCost) / gasUsed).toString() : null,
    timeSeenInAltMempool: null,
    timeSeenInMainMempool: null,
  };
}

async function liveUserOpWithTransfers(ctx: Ctx, op: UserOp): Promise<z.input<typeof liveUserOpWithTransfersSchema>> {
  const transfers = await tokenTransfers.listByUserOp(ctx.db, op.chainId, op);
  const party = (t: tokenTransfers.UserOpTokenTransfer) => ({
    contractAddress: t.token,
    from: t.from,
    to: t.to,
    name: t.name,
    symbol: t.symbol,
  });
  return {
    ...liveUserOp(op),
    erc20Transfers: transfers
      .filter((t) => t.standard === 'ERC20')
      .map((t) => ({ ...party(t), value: t.value, decimals: t.decimals === null ? null : String(t.decimals) })),
    erc721Transfers: transfers
      .filter((t) => t.standard !== 'ERC20')
      .map((t) => ({ ...party(t), tokenId: t.tokenId ?? '0', decimals: null })),
  };
}

/** The fields of the spec's bundler sample (BundlerDetails.userOps[]). */
const BUNDLER_OP_FIELDS = Object.keys(bundlerUserOpSchema.shape) as Array<keyof typeof bundlerUserOpSchema.shape>;

const liveBundlerUserOpSchema = liveUserOpSchema
  .pick(Object.fromEntries(BUNDLER_OP_FIELDS.map((k) => [k, true])) as { [K in (typeof BUNDLER_OP_FIELDS)[number]]: true })
  .meta({ id: 'JiffyscanBundlerUserOp' });

/** A bundler page row: the spec's bundler sample fields, calls as arrays. */
const liveBundlerUserOp = (op: LiveUserOp) =>
  Object.fromEntries(BUNDLER_OP_FIELDS.map((k) => [k, op[k]])) as z.infer<typeof liveBundlerUserOpSchema>;

// Logs.

export const liveLogSchema = logSchema
  .extend({
    /** The event's indexed arguments by name (the topics after the first); null when the event is unknown. */
    topicsDecoded: z.record(z.string(), z.union([z.string(), z.boolean()])).nullable(),
    /** The event's other arguments by name (the data); null when the event is unknown. */
    dataDecoded: z.record(z.string(), z.union([z.string(), z.boolean()])).nullable(),
  })
  .meta({ id: 'JiffyscanLog' });

export function liveLog(log: Log): z.infer<typeof liveLogSchema> {
  const decoded = decodeLog(log);
  const byName = (indexed: boolean) =>
    decoded ? Object.fromEntries(decoded.inputs.filter((i) => i.indexed === indexed).map((i) => [i.name, i.value])) : null;
  return { ...log, topicsDecoded: byName(true), dataDecoded: byName(false) };
}

// Execution traces.

/** A trace node as the explorer reads it: each call frame also named (`method`) and decoded when its selector is known. */
export type LiveTraceNode = {
  traceData: TraceNode['traceData'] & { method?: string; decodedInput?: z.infer<typeof decodedArgumentSchema>[] };
  next: LiveTraceNode[];
};

const liveTraceNodeSchema: z.ZodType<LiveTraceNode, LiveTraceNode> = z
  .lazy(() =>
    z.object({
      traceData: z.object({
        ...traceDataSchema.shape,
        method: z.string().optional(),
        decodedInput: z.array(decodedArgumentSchema).optional(),
      }),
      next: z.array(liveTraceNodeSchema),
    }),
  )
  .meta({ id: 'JiffyscanTraceNode' });

export function liveTraceNode(node: TraceNode): LiveTraceNode {
  const call = decodeCall(node.traceData.input);
  return {
    traceData: { ...node.traceData, ...(call ? { method: call.method, decodedInput: call.decodedInput } : {}) },
    next: node.next.map(liveTraceNode),
  };
}

const selectorOf = (input: string) => input.slice(0, 10);

/** The op's sender, from the EntryPoint's innerHandleOp frame (its opInfo.mUserOp). */
function senderOf(execution: TraceNode): string | undefined {
  const call = decodeCall(execution.traceData.input);
  const opInfo = call?.method === 'innerHandleOp' ? call.decodedInput.find((a) => a.name === 'opInfo')?.value : undefined;
  const sender = (opInfo as { mUserOp?: { sender?: unknown } } | undefined)?.mUserOp?.sender;
  return typeof sender === 'string' ? sender.toLowerCase() : undefined;
}

/** ERC-7579 IHook preCheck(address,uint256,bytes), the draft's preCheck(address,bytes), and postCheck(bytes). */
const HOOK_CHECKS = new Set(['0xd68f6025', '0x20af8e9a', '0x173bf7da']);

/**
 * The op's execution as the explorer reads it: it takes `executionTrace.next` as the op's own calls
 * (its Target row, its multisend detection). So the root is the
 * EntryPoint's call into the account, and `next` the calls the account made, found by folding away
 * the frames of the account's own machinery, which run as the account or on its behalf:
 * - its DELEGATECALLs: a proxy into its implementation (ERC-1967, ERC-1167 clones, Safe's
 *   singleton), an ERC-7579 delegatecall execution, Safe's MultiSendCallOnly (whose CALLs are the
 *   batch);
 * - its calls to itself (an executeUserOp that re-enters the account), except where calling itself
 *   is what the op asks for (Coinbase's executeWithoutChainIdValidation: those CALLs are its calls);
 * - a fallback handler it forwards the EntryPoint's call to (the calldata keeps the selector: Safe's
 *   4337 module), or an account method to (Safe7579's launchpad runs the adapter's ERC-7579
 *   execute), which calls back into the account (execTransactionFromModule): the callbacks' calls
 *   are the account's, and its other calls to that handler (setting it up) are none of the op's;
 * - its STATICCALLs: the account reading, not acting (a diamond's facet lookup — Barz —, a factory's
 *   registry — Thirdweb): an op's calls are CALLs;
 * - its calls to its ERC-7579 hook's preCheck and postCheck around the execution (Nexus, Safe7579
 *   and Etherspot make them; Etherspot's Modular Wallet 1.0.0 by the ERC-7579 draft's preCheck).
 * A call the account made keeps its subtree as traced (a token calling the account back stays
 * under it). Without a call into the account (an op with empty callData) the EntryPoint's frame
 * stays the root. The frames as traced stay in /v0 and getUserOpTraces.
 */
export function accountExecutionTrace(execution: TraceNode): TraceNode {
  const sender = senderOf(execution);
  const accountCall = execution.next.find((n) => n.traceData.to === sender && n.traceData.from === execution.traceData.to);
  if (!accountCall) return execution;
  const entered = selectorOf(accountCall.traceData.input);
  // An op may ask the account to call itself: Coinbase's replayable owner changes, an ERC-7579
  // account's installModule / uninstallModule among its calls.
  const asked = decodeAccountCalls(accountCall.traceData.input, sender);
  const callsItself = entered === SELF_CALLS_SELECTOR || asked.some((c) => c.target === sender);
  const askedFor = (to: string, input: string) => asked.some((c) => c.target === to && selectorOf(c.data) === selectorOf(input));
  const handlers = new Set<string>();
  const callsOf = (frame: TraceNode): TraceNode[] =>
    frame.next.flatMap((child) => {
      const { to, type, input } = child.traceData;
      if (callsItself && type === 'CALL' && to === sender) return [child];
      if (type === 'DELEGATECALL' || type === 'CALLCODE' || to === sender) return callsOf(child);
      if (type === 'STATICCALL') return [];
      // The account running its ERC-7579 hook around the execution, unless the op asked for the call.
      if (HOOK_CHECKS.has(selectorOf(input)) && !askedFor(to, input)) return [];
      // A handler is told apart from a target that shares the selector (an account's execute calling
      // another account's) by its calls back into the account.
      const callbacks = child.next.filter((c) => c.traceData.to === sender);
      const handled = selectorOf(input) === entered || accountMethod(selectorOf(input)) !== undefined;
      if (type === 'CALL' && handled && callbacks.length > 0) {
        handlers.add(to);
        return callbacks.flatMap(callsOf);
      }
      return [child];
    });
  // The account's other calls to a handler are its setup of it (Safe7579's initializeAccount).
  const calls = callsOf(accountCall).filter((c) => !handlers.has(c.traceData.to));
  return { traceData: { ...accountCall.traceData, executionCall: true }, next: calls };
}

// Address data.

/** Covalent's balance item, as the live API passed it on: `quote_rate` a number, `native_token` a boolean. */
const liveBalanceSchema = balanceSchema
  .extend({ quote_rate: z.number().nullable(), native_token: z.boolean() })
  .meta({ id: 'JiffyscanBalance' });

const liveBalance = (balance: Balance): z.infer<typeof liveBalanceSchema> => ({
  ...balance,
  quote_rate: balance.quote_rate === null ? null : Number(balance.quote_rate),
  native_token: balance.native_token === 'true',
});

// Search.

/**
 * The `type` names the explorer routes on (its utils.tsx constructRedirectUrl): a paymaster is
 * `paymasters`, a bundler `beneficiarie` (its spelling: bundlers were found as the ops'
 * beneficiaries). Any other type it does not route says "No results found".
 */
const LIVE_SEARCH_TYPES = {
  userOpHash: 'userOpHash',
  bundle: 'bundle',
  account: 'account',
  paymaster: 'paymasters',
  bundler: 'beneficiarie',
  factory: 'factory',
  block: 'block',
} as const satisfies Record<SearchType, string>;
const liveSearchType = z.enum(Object.values(LIVE_SEARCH_TYPES) as [string, ...string[]]);

const liveSearchResultSchema = z
  .union([
    searchResultSchema
      .extend({ type: liveSearchType, matches: z.array(z.object({ network: z.string(), type: liveSearchType })) })
      .meta({ id: 'JiffyscanSearchResult' }),
    // The explorer treats a body with a message as "nothing found" and any non-200 as an invalid term.
    z.object({ message: z.string() }).meta({ id: 'JiffyscanSearchNotFound' }),
  ])
  .meta({ id: 'JiffyscanSearchAnswer' });

const liveSearchResult = (result: SearchResult) => ({
  ...result,
  type: LIVE_SEARCH_TYPES[result.type],
  matches: result.matches.map((m) => ({ ...m, type: LIVE_SEARCH_TYPES[m.type] })),
});

// The endpoints whose shape differs.

const userOpsOf = <T extends { userOps: UserOp[] }>(detail: T) => ({ ...detail, userOps: detail.userOps.map(liveUserOp) });

const presentations = {
  getUserOp: presentation('getUserOp', z.object({ userOps: z.array(liveUserOpWithTransfersSchema) }), async ({ userOps }, ctx) => ({
    userOps: await Promise.all(userOps.map((op) => liveUserOpWithTransfers(ctx, op))),
  })),
  getLatestUserOps: presentation('getLatestUserOps', z.object({ userOps: z.array(liveUserOpSchema) }), ({ userOps }) => ({
    userOps: userOps.map(liveUserOp),
  })),
  getAddressActivity: presentation(
    'getAddressActivity',
    z.object({ accountDetail: accountDetailSchema.extend({ userOps: z.array(liveUserOpSchema) }) }),
    ({ accountDetail }) => ({ accountDetail: userOpsOf(accountDetail) }),
  ),
  getPaymasterActivity: presentation(
    'getPaymasterActivity',
    z.object({ paymasterDetail: paymasterDetailSchema.extend({ userOps: z.array(liveUserOpSchema) }) }),
    ({ paymasterDetail }) => ({ paymasterDetail: userOpsOf(paymasterDetail) }),
  ),
  getBundleActivity: presentation(
    'getBundleActivity',
    z.object({ bundleDetails: bundleDetailsSchema.extend({ userOps: z.array(liveUserOpSchema) }) }),
    ({ bundleDetails }) => ({ bundleDetails: userOpsOf(bundleDetails) }),
  ),
  getBlockActivity: presentation(
    'getBlockActivity',
    z.object({ block: blockActivitySchema.extend({ userOps: z.array(liveUserOpSchema) }) }),
    ({ block }) => ({ block: userOpsOf(block) }),
  ),
  getBundlerActivity: presentation(
    'getBundlerActivity',
    z.object({
      userOps: z.array(liveUserOpSchema),
      bundlerDetails: bundlerDetailsSchema.extend({ userOps: z.array(liveBundlerUserOpSchema) }),
    }),
    ({ userOps, bundlerDetails }) => {
      const live = userOps.map(liveUserOp);
      return { userOps: live, bundlerDetails: { ...bundlerDetails, userOps: live.map(liveBundlerUserOp) } };
    },
  ),
  getAddressAggregateData: presentation(
    'getAddressAggregateData',
    z.object({
      accountDetail: z.object({
        userOps: z.array(liveUserOpSchema),
        transactions: z.array(transactionSchema),
        erc20Transfers: z.array(erc20TransferSchema),
        erc721Transfers: z.array(nftTransferSchema),
      }),
    }),
    (answer) => ({ accountDetail: { ...answer, userOps: answer.userOps.map(liveUserOp) } }),
  ),
  getAddressTransactions: presentation(
    'getAddressTransactions',
    z.object({ transactions: z.array(transactionSchema) }),
    (transactions) => ({
      transactions,
    }),
  ),
  getAddressERC20Transfers: presentation(
    'getAddressERC20Transfers',
    z.object({ erc20Transfers: z.array(erc20TransferSchema) }),
    (erc20Transfers) => ({ erc20Transfers }),
  ),
  getAddressNFTTransfers: presentation(
    'getAddressNFTTransfers',
    z.object({ erc721Transfers: z.array(nftTransferSchema) }),
    (erc721Transfers) => ({
      erc721Transfers,
    }),
  ),
  getAddressBalances: presentation('getAddressBalances', z.object({ tokenBalances: z.array(liveBalanceSchema) }), (balances) => ({
    tokenBalances: balances.map(liveBalance),
  })),
  getDailyMetrics: presentation(
    'getDailyMetrics',
    z.object({ metrics: z.array(dailyMetricSchema), matrics: z.array(dailyMetricSchema) }),
    ({ metrics }) => ({ metrics, matrics: metrics }),
  ),
  getUserOpMetadata: presentation(
    'getUserOpMetadata',
    userOpMetadataSchema.extend({ executionTrace: liveTraceNodeSchema.nullable() }),
    (metadata) => ({
      ...metadata,
      executionTrace: metadata.executionTrace ? liveTraceNode(accountExecutionTrace(metadata.executionTrace)) : null,
    }),
  ),
  getUserOpLogs: presentation('getUserOpLogs', z.object({ logs: z.array(liveLogSchema) }), ({ logs }) => ({ logs: logs.map(liveLog) })),
  getLogFromIndex: presentation('getLogFromIndex', z.object({ log: liveLogSchema }), ({ log }) => ({ log: liveLog(log) })),
  searchEntry: presentation('searchEntry', liveSearchResultSchema, liveSearchResult, (error) => ({ message: error.message })),
};

const DESCRIPTION = `The JiffyScan live API's dialect of the opscan Explorer Data API: the same endpoints, parameters,
handlers and cache as \`/v0\`, answered in the shapes the live JiffyScan API served, so that its explorer web app
and SDK work unchanged with their base URL \`https://api.jiffyscan.xyz/v0/\` replaced by \`<opscan>/jiffyscan/v0/\`.

What differs from \`/v0\` (the spec's shapes):
- user operations: \`target\`, \`value\` and \`callData\` are arrays, one entry per account call (an op whose callData
  opscan cannot decode as an account call has one entry: the sender called with that callData and no value);
  \`preDecodedCallData\` is the op's own callData; \`actualGasPrice\` is added; the mempool sighting times are null;
  getUserOp items also list the op's \`erc20Transfers\` and \`erc721Transfers\`;
- getAddressTransactions → \`{transactions}\`, getAddressERC20Transfers → \`{erc20Transfers}\`,
  getAddressNFTTransfers → \`{erc721Transfers}\`, getAddressBalances → \`{tokenBalances}\` (with \`quote_rate\` a number
  and \`native_token\` a boolean), getAddressAggregateData → \`{accountDetail: {userOps, transactions, erc20Transfers,
  erc721Transfers}}\`;
- getUserOpMetadata's \`executionTrace\` is rooted at the EntryPoint's call into the account, and its \`next\` are the calls
  the account made (its proxy's, Safe's and MultiSend's DELEGATECALLs and Safe's 4337-module round trip folded away);
  \`/v0\` and getUserOpTraces keep the frames as traced;
- getDailyMetrics answers the days under \`matrics\` (the SDK's spelling) as well as \`metrics\`;
- logs carry \`topicsDecoded\` and \`dataDecoded\` (arguments by name) when their event is known, else null;
- searchEntry names types as the explorer routes them (\`paymasters\`, \`beneficiarie\` for a bundler; \`userOpHash\`,
  \`bundle\`, \`account\`, \`factory\`, \`block\` as in \`/v0\`), and a term nothing matches is 200 \`{message}\` (the
  explorer shows "No results"), not a 404.

Everything else (errors, keys, limits, caching, networks) is as in \`/v0\`.`;

export const jiffyscanDialect = {
  name: 'jiffyscan',
  basePath: '/jiffyscan/v0',
  title: 'opscan Explorer Data API — JiffyScan dialect',
  description: DESCRIPTION,
  presentations,
} satisfies Dialect<typeof presentations>;
