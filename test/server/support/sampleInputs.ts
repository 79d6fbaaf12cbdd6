import type { GroundTruth } from '../../../devnet/index.js';

/** A valid input of every query endpoint, picked from the ground truth (REST query strings). */
export function sampleInputs(truth: GroundTruth): Record<string, Record<string, string>> {
  const op = truth.userOps.find((o) => o.paymaster && o.success) ?? truth.userOps[0]!;
  const transfer = truth.transfers.find((x) => x.standard === 'ERC20')!;
  const nft = truth.transfers.find((x) => x.standard === 'ERC721')!;
  const account = truth.accounts[0]!;
  const network = 'devnet';
  const page = { first: '5', skip: '1' };
  return {
    getNetworks: {},
    getNetworkStatus: { network },
    getStatusSummary: { network },
    getLatestUserOps: { network, ...page },
    getUserOp: { hash: op.userOpHash },
    getAddressActivity: { address: op.sender, network, ...page },
    getAccountModules: { address: op.sender, network },
    getTopModules: { network, first: '5', skip: '0' },
    getAccountDelegations: { address: op.sender, network, ...page },
    getPaymasterActivity: { address: op.paymaster!, network, ...page },
    getBundleActivity: { bundle: op.transactionHash, network, first: '5', skip: '0' },
    getBlockActivity: { blockNumber: String(op.blockNumber), network, first: '5', skip: '0' },
    getGlobalCounts: { network },
    searchEntry: { entry: op.sender },
    getAddressAggregateData: { address: transfer.from, filter: 'userOps,erc20Transfers', first: '5', skip: '0' },
    getBundlerActivity: { address: op.bundler, network, ...page },
    getLatestBundles: { network, ...page },
    getTopPaymasters: { network, first: '5', skip: '0' },
    getUserOpMetadata: { userOpHash: transfer.userOpHash, network },
    getFactoryDetails: { factory: account.factory, network, first: '5', skip: '0' },
    getUserOpLogs: { userOpHash: transfer.userOpHash, network },
    getTopFactories: { first: '5', skip: '0' },
    getAddressTransactions: { address: op.sender, network, first: '5', skip: '0' },
    getAddressNFTTransfers: { address: nft.to, network, first: '5', skip: '0' },
    getLogFromIndex: { transactionHash: transfer.transactionHash, logIndex: String(transfer.logIndex), network },
    getAddressBalances: { address: transfer.from, network, first: '5', skip: '0' },
    getAddressERC20Transfers: { address: transfer.from, network, first: '5', skip: '0' },
    getDailyMetrics: { network, noOfDays: '3' },
    getTopBundlers: { network, first: '3', skip: '0' },
    getPrices: {},
    getUserOpTraces: { userOpHash: op.userOpHash, network },
    getTrxTraces: { network, trxHash: op.transactionHash },
    // Webhook reads (owned by the webhook slice): an empty list and an unknown id's 404.
    listWebhooks: {},
    getWebhookDeliveries: { id: 'wh_00000000000000000000000000' },
  };
}
