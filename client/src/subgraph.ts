import { OpscanError } from './errors.js';
import { requestJson, type CallOptions, type OpscanClientOptions } from './request.js';

/**
 * The three operations of the published subgraph client (`jiffyscan-graph-wrapper`), with its
 * names, arguments and answers, over opscan's GraphQL endpoint (`/subgraphs/name/<network>`), and
 * `graphql` for any other query. Where that library returns the raw error body, these throw an
 * OpscanError.
 */

/** The subgraph's scalars as JSON carries them: BigInt and Bytes are strings, Int a number. */
type BigInt = string;
type Bytes = string;

export type SubgraphTokenTransfer = {
  id: string;
  contractAddress: Bytes | null;
  from: Bytes;
  to: Bytes;
  name: string | null;
  symbol: string | null;
};

/** A user operation as getUserOp answers it (getAddressActivity answers the fields of SubgraphActivityOp). */
export type SubgraphUserOp = {
  id: string;
  userOpHash: Bytes;
  transactionHash: Bytes;
  sender: Bytes;
  target: Bytes | null;
  accountSender: { factory: Bytes | null } | null;
  accountTarget: { factory: Bytes | null } | null;
  success: boolean;
  revertReason: Bytes | null;
  paymasterRevertReason: Bytes | null;
  signature: Bytes | null;
  paymasterAndData: Bytes | null;
  paymaster: Bytes;
  nonce: BigInt;
  network: string;
  initCode: Bytes | null;
  factory: Bytes;
  input: Bytes | null;
  /** Moved to preDecodedCallData, as the published library answers ops: always `''`. */
  callData: string;
  preDecodedCallData: Bytes | null;
  verificationGasLimit: BigInt | null;
  preVerificationGas: BigInt | null;
  callGasLimit: BigInt | null;
  gasLimit: BigInt | null;
  maxFeePerGas: BigInt | null;
  maxPriorityFeePerGas: BigInt | null;
  gasPrice: BigInt | null;
  accountGasLimits: Bytes | null;
  gasFees: Bytes | null;
  beneficiary: Bytes | null;
  baseFeePerGas: BigInt | null;
  actualGasUsed: BigInt;
  actualGasCost: BigInt;
  entryPoint: Bytes;
  blockTime: BigInt;
  blockNumber: BigInt;
  erc20Transfers: Array<SubgraphTokenTransfer & { decimals: number | null; value: BigInt }>;
  erc721Transfers: Array<SubgraphTokenTransfer & { tokenId: BigInt | null }>;
};

/** A user operation of an address's activity page. */
export type SubgraphActivityOp = Pick<
  SubgraphUserOp,
  | 'id'
  | 'sender'
  | 'target'
  | 'actualGasCost'
  | 'transactionHash'
  | 'actualGasUsed'
  | 'success'
  | 'revertReason'
  | 'blockTime'
  | 'blockNumber'
  | 'paymaster'
  | 'network'
  | 'userOpHash'
  | 'input'
  | 'nonce'
  | 'beneficiary'
  | 'entryPoint'
> & { callData: ''; preDecodedCallData?: undefined };

export type NetworkStatus = {
  _meta: {
    deployment: string;
    hasIndexingErrors: boolean;
    block: { hash: string | null; number: number; parentHash: string | null; timestamp: number | null };
  };
};

/** The subgraph's Account, as getAddressActivity asks for it. */
export type SubgraphAccount = {
  id: string;
  address: Bytes;
  blockNumber: BigInt | null;
  blockTime: BigInt | null;
  factory: Bytes | null;
  paymaster: Bytes | null;
  transactionHash: Bytes | null;
  userOpHash: Bytes | null;
  userOpsCount: BigInt;
};

export type AddressActivity = {
  /** The account (empty when the address never sent an op) and its page of ops. */
  accountDetail: Partial<SubgraphAccount> & { userOps: SubgraphActivityOp[] };
};

const META_QUERY = `query MetaQuery { _meta { deployment hasIndexingErrors block { hash number parentHash timestamp } } }`;

const USER_OP_QUERY = `query GetUserOpHashDetails($userOpHash: Bytes) {
  userOps(orderBy: blockTime, orderDirection: desc, where: {userOpHash: $userOpHash}) {
    verificationGasLimit userOpHash transactionHash target accountTarget { factory } success signature sender
    accountSender { factory } revertReason preVerificationGas paymasterAndData paymaster nonce network initCode
    maxPriorityFeePerGas maxFeePerGas input gasPrice id gasLimit factory callGasLimit callData blockTime blockNumber
    accountGasLimits gasFees paymasterRevertReason beneficiary baseFeePerGas actualGasUsed actualGasCost entryPoint
    erc20Transfers { contractAddress decimals from id name symbol to value }
    erc721Transfers(first: 10) { contractAddress from id name symbol to tokenId }
  }
}`;

/** The ops `where`: the address as sender or first call target, in an inclusive block window (0: no bound). */
function addressActivityQuery(startBlock: number, endBlock: number): string {
  // As the published library reads the window: none when both are 0 or when start > end.
  const windowed = !(startBlock === 0 && endBlock === 0) && !(startBlock > endBlock);
  const bounds = [
    ...(windowed && startBlock !== 0 ? ['{blockNumber_gte: $startBlock}'] : []),
    ...(windowed && endBlock !== 0 ? ['{blockNumber_lte: $endBlock}'] : []),
  ];
  const party = '{or: [{sender: $address}, {target: $address}]}';
  const where = bounds.length > 0 ? `{and: [${party}, ${bounds.join(', ')}]}` : party;
  return `query AddressActivityQuery($address: Bytes, $first: Int, $skip: Int, $startBlock: BigInt, $endBlock: BigInt) {
    accounts(where: {address: $address}) { id address blockNumber blockTime factory paymaster transactionHash userOpHash userOpsCount }
    userOps(first: $first, skip: $skip, orderBy: blockTime, orderDirection: desc, where: ${where}) {
      id sender target actualGasCost transactionHash actualGasUsed success revertReason blockTime blockNumber paymaster
      network userOpHash input nonce beneficiary entryPoint
    }
  }`;
}

/** As the published library answers ops: the op's callData moved to preDecodedCallData. */
const asJiffyscanOps = <T extends { callData?: Bytes | null }>(
  ops: T[],
): Array<Omit<T, 'callData'> & { preDecodedCallData: T['callData']; callData: '' }> =>
  ops.map((op) => ({ ...op, preDecodedCallData: op.callData, callData: '' }));

export function createSubgraphOperations<Network extends string = string>(options: OpscanClientOptions) {
  /**
   * Any query of the network's subgraph (`/subgraphs/name/<network>`), with its variables; answers
   * `data`, typed as the caller says. GraphQL errors throw an OpscanError of kind `api`, code GRAPHQL.
   */
  async function graphql<T>(network: Network, query: string, variables: Record<string, unknown> = {}, call?: CallOptions): Promise<T> {
    const answer = (await requestJson(
      options,
      `/subgraphs/name/${encodeURIComponent(network)}`,
      { method: 'POST', body: JSON.stringify({ query, variables }) },
      call,
    )) as { data?: T | null; errors?: Array<{ message: string }> };
    if (answer.errors?.length || !answer.data) {
      const message = answer.errors?.map((e) => e.message).join('; ') ?? 'No data';
      throw new OpscanError({ kind: 'api', status: 200, code: 'GRAPHQL', message });
    }
    return answer.data;
  }

  return {
    graphql,

    /** The network's indexed head, as the subgraph's `_meta`. */
    getNetworkStatus(network: Network, call?: CallOptions): Promise<NetworkStatus> {
      return graphql<NetworkStatus>(network, META_QUERY, {}, call);
    },

    /** The op with this hash: `{userOps: [op]}`, or `{userOps: []}`. */
    async getUserOp(network: Network, userOpHash: string, call?: CallOptions): Promise<{ userOps: SubgraphUserOp[] }> {
      const data = await graphql<{ userOps: Array<Omit<SubgraphUserOp, 'preDecodedCallData' | 'callData'> & { callData: Bytes | null }> }>(
        network,
        USER_OP_QUERY,
        { userOpHash },
        call,
      );
      return { userOps: asJiffyscanOps(data.userOps) };
    },

    /**
     * The account at `address` and a page of the ops it sent or was the first call target of,
     * newest first: `first` ops after `skip`, within blocks `startBlock`..`endBlock` (0: no bound).
     */
    // eslint-disable-next-line max-params -- the published library's signature, kept so that callers change nothing
    async getAddressActivity(
      network: Network,
      address: string,
      first: number,
      skip: number,
      startBlock: number,
      endBlock: number,
      call?: CallOptions,
    ): Promise<AddressActivity> {
      const data = await graphql<{
        accounts: SubgraphAccount[];
        userOps: Array<Omit<SubgraphActivityOp, 'callData' | 'preDecodedCallData'> & { callData?: undefined }>;
      }>(
        network,
        addressActivityQuery(startBlock, endBlock),
        { address, first, skip, startBlock: String(startBlock), endBlock: String(endBlock) },
        call,
      );
      return { accountDetail: { ...(data.accounts[0] ?? {}), userOps: asJiffyscanOps(data.userOps) } };
    },
  };
}
