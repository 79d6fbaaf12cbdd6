/**
 * The JSON-RPC shapes the indexer reads (hex quantities as the node sends them). Only the fields
 * we use are declared; sync/ checks them when they arrive, decode/ trusts them.
 */

export type RpcLog = {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  /** Returned by recent nodes (geth ≥ 1.16, anvil, reth); saves a header call when present. */
  blockTimestamp?: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
};

export type RpcReceipt = {
  transactionHash: string;
  transactionIndex: string;
  blockHash: string;
  blockNumber: string;
  from: string;
  to: string | null;
  status: string;
  gasUsed: string;
  effectiveGasPrice: string;
  cumulativeGasUsed?: string;
  type?: string;
  /** OP-stack L1 data fee, paid on top of gasUsed × effectiveGasPrice. */
  l1Fee?: string | null;
  logs: RpcLog[];
};

export type RpcTransaction = {
  hash: string;
  from: string;
  to: string | null;
  input: string;
  blockHash: string;
  /** The fields the delegations need (INDEXER_DELEGATIONS): every node answers them. */
  blockNumber?: string;
  transactionIndex?: string;
  nonce?: string;
  /** EIP-7702 (type 0x4) transactions: the delegations they set. */
  authorizationList?: RpcAuthorization[];
};

/** One signed EIP-7702 authorization; the authority is recovered from the signature. */
export type RpcAuthorization = { chainId: string; address: string; nonce: string; yParity: string; r: string; s: string };

export type RpcBlockHeader = {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
};

/** A `callTracer` frame (debug_traceTransaction). */
export type CallFrame = {
  type: string;
  from: string;
  to?: string;
  input: string;
  output?: string;
  value?: string;
  gas?: string;
  gasUsed?: string;
  error?: string;
  calls?: CallFrame[];
};

/** A block header as the indexer keeps it (numbers as JS numbers: block numbers and unix seconds fit). */
export type BlockHeader = { number: number; hash: string; parentHash: string; timestamp: number };

/** One bundle transaction with everything decoding needs. `trace` is absent when not fetched or unsupported. */
export type RawBundleTx = {
  receipt: RpcReceipt;
  tx: RpcTransaction;
  trace?: CallFrame | null;
  /** Unix seconds of its block. */
  blockTime: number;
};

/** Everything fetched for one block range, before decoding. */
export type RawRange = {
  chainId: number;
  fromBlock: number;
  toBlock: number;
  /** Headers fetched for the range: at least `fromBlock` and `toBlock` (reorg checks). */
  headers: BlockHeader[];
  /** EntryPoint logs of the range (every version, one eth_getLogs per sub-range), in chain order. */
  entryPointLogs: RpcLog[];
  /** Transactions holding a bundle (a BeforeExecution or UserOperationEvent), in chain order. */
  bundleTxs: RawBundleTx[];
  /** Unix seconds per block number, for every block with an EntryPoint log. */
  blockTimes: Map<number, number>;
  /** Whether the node answered debug_traceTransaction; false → op traces are stored as unavailable. */
  tracesSupported: boolean;
  /**
   * INDEXER_TRANSFERS=known: the range's token logs (Transfer, TransferSingle, TransferBatch) outside
   * bundle transactions that may concern a known address (a party known when fetched or seen in
   * the range's EntryPoint logs); their blocks' times are in blockTimes. Absent under ops.
   */
  tokenLogs?: RpcLog[];
  /**
   * The range's transactions with an EIP-7702 authorization list (INDEXER_DELEGATIONS: the bundle
   * transactions, or every type-4 transaction), in chain order, their authorities recovered.
   */
  authorizationTxs?: AuthorizationTx[];
  /** Each authority's nonce before the block (`<block>:<authority>`); null when the node had no answer. */
  authorityNonces?: Map<string, bigint | null>;
};

/** One tuple of an authorization list, its authority recovered (null: no address recovers). */
export type RecoveredAuthorization = {
  chainId: bigint;
  /** null: address zero (the tuple clears the delegation). */
  delegate: string | null;
  nonce: bigint;
  authority: string | null;
};

/** A transaction carrying authorizations, as the delegations are decoded from it. */
export type AuthorizationTx = {
  txHash: string;
  blockNumber: number;
  txIndex: number;
  blockTime: number;
  from: string;
  nonce: bigint;
  viaUserOp: boolean;
  authorizations: RecoveredAuthorization[];
};

export const hexToNumber = (hex: string): number => Number.parseInt(hex, 16);
