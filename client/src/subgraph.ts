import { OpscanError } from './errors.js';
import { requestJson, type OpscanClientOptions } from './request.js';

/**
 * The three operations of the published subgraph client (`jiffyscan-graph-wrapper`), with its
 * names, arguments and answers, over opscan's GraphQL endpoint (`/subgraphs/name/<network>`).
 * Where that library returns the raw error body, these throw an OpscanError.
 */

/** A subgraph user operation; BigInts and Bytes are strings. */
export type SubgraphUserOp = Record<string, unknown> & { userOpHash: string; callData: string; preDecodedCallData?: string };

export type NetworkStatus = {
  _meta: {
    deployment: string;
    hasIndexingErrors: boolean;
    block: { hash: string | null; number: number; parentHash: string | null; timestamp: number | null };
  };
};

export type AddressActivity = {
  /** The account (empty when the address never sent an op) and its page of ops. */
  accountDetail: Partial<
    Record<
      'id' | 'address' | 'blockNumber' | 'blockTime' | 'factory' | 'paymaster' | 'transactionHash' | 'userOpHash' | 'userOpsCount',
      string | null
    >
  > & {
    userOps: SubgraphUserOp[];
  };
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
const asJiffyscanOps = (ops: SubgraphUserOp[]): SubgraphUserOp[] =>
  ops.map((op) => ({ ...op, preDecodedCallData: op.callData, callData: '' }));

export function createSubgraphOperations(options: OpscanClientOptions) {
  async function query<T>(network: string, text: string, variables: Record<string, unknown>): Promise<T> {
    const answer = (await requestJson(options, `/subgraphs/name/${encodeURIComponent(network)}`, {
      method: 'POST',
      body: JSON.stringify({ query: text, variables }),
    })) as { data?: T; errors?: Array<{ message: string }> };
    if (answer.errors?.length || !answer.data) {
      throw new OpscanError({ status: 200, code: 'GRAPHQL', message: answer.errors?.map((e) => e.message).join('; ') ?? 'No data' });
    }
    return answer.data;
  }

  return {
    /** The network's indexed head, as the subgraph's `_meta`. */
    getNetworkStatus(network: string): Promise<NetworkStatus> {
      return query<NetworkStatus>(network, META_QUERY, {});
    },

    /** The op with this hash: `{userOps: [op]}`, or `{userOps: []}`. */
    async getUserOp(network: string, userOpHash: string): Promise<{ userOps: SubgraphUserOp[] }> {
      const data = await query<{ userOps: SubgraphUserOp[] }>(network, USER_OP_QUERY, { userOpHash });
      return { userOps: asJiffyscanOps(data.userOps) };
    },

    /**
     * The account at `address` and a page of the ops it sent or was the first call target of,
     * newest first: `first` ops after `skip`, within blocks `startBlock`..`endBlock` (0: no bound).
     */
    // eslint-disable-next-line max-params -- the published library's signature, kept so that callers change nothing
    async getAddressActivity(
      network: string,
      address: string,
      first: number,
      skip: number,
      startBlock: number,
      endBlock: number,
    ): Promise<AddressActivity> {
      const data = await query<{ accounts: AddressActivity['accountDetail'][]; userOps: SubgraphUserOp[] }>(
        network,
        addressActivityQuery(startBlock, endBlock),
        {
          address,
          first,
          skip,
          startBlock: String(startBlock),
          endBlock: String(endBlock),
        },
      );
      return { accountDetail: { ...(data.accounts[0] ?? {}), userOps: asJiffyscanOps(data.userOps) } };
    },
  };
}
