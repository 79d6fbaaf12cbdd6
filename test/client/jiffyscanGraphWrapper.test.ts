/**
 * The published subgraph client, `jiffyscan-graph-wrapper`, unchanged, against opscan: only the URL
 * it posts to changes. Its URLs are hard-coded to The Graph's gateway
 * (`https://gateway-arbitrum.network.thegraph.com/api/<key>/subgraphs/id/<id>`), so the test wraps
 * `fetch` to send those requests to the same path on a running opscan, with `subgraphs/id/<id>`
 * read as `subgraphs/name/devnet` — the key stays in the path, where opscan reads it.
 */
import { expect } from 'chai';
import { JiffyscanGraphClient } from 'jiffyscan-graph-wrapper';
import type { TruthUserOp } from '../../devnet/index.js';
import { createOpscanClient } from '../../client/src/index.js';
import { expectedUserOp } from '../server/support/expected.js';
import { chainBlock, expectedAccount, newestFirstById } from '../server/support/expectedSubgraph.js';
import { useListeningApp } from '../helpers/app.js';
import { useIndexedDevnet } from '../server/support/indexedDevnet.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GATEWAY = /^https:\/\/gateway-arbitrum\.network\.thegraph\.com\/api\/([^/]+)\/subgraphs\/id\/[^/]+$/;

describe('jiffyscan-graph-wrapper, unchanged, against opscan', () => {
  const d = useIndexedDevnet({ ops: 200, days: 2, seed: 23 });
  const listening = useListeningApp(() => d.deps);
  const realFetch = globalThis.fetch;
  const sent: string[] = [];

  before(() => {
    globalThis.fetch = (input, init) => {
      const match = GATEWAY.exec(input instanceof Request ? input.url : input.toString());
      if (!match) return realFetch(input, init);
      sent.push(typeof init?.body === 'string' ? init.body : '');
      return realFetch(`${listening.origin}/api/${match[1]}/subgraphs/name/devnet`, init);
    };
  });
  after(() => {
    globalThis.fetch = realFetch;
  });

  const client = () => new JiffyscanGraphClient(d.key);

  it('getNetworkStatus answers the indexed head block as the chain has it', async () => {
    const status = (await client().getNetworkStatus('mainnet')) as Json;
    const number = status._meta.block.number;
    expect(number).to.be.at.least(Math.max(...d.truth.userOps.map((o) => o.blockNumber)));
    expect(status).to.deep.equal({
      _meta: { deployment: 'opscan/devnet', hasIndexingErrors: false, block: await chainBlock(d.devnet.rpcUrl, number) },
    });
  });

  it('getUserOp answers the op as the ground truth has it, with its transfers', async () => {
    const withTransfers = d.truth.userOps.filter((o) =>
      d.truth.transfers.some((t) => t.userOpHash === o.userOpHash && t.standard !== 'NATIVE'),
    );
    for (const op of [...withTransfers.slice(0, 3), d.truth.userOps.find((o) => !o.success)!, d.truth.userOps.find((o) => o.factory)!]) {
      const { userOps } = (await client().getUserOp('mainnet', op.userOpHash as `0x${string}`)) as { userOps: Json[] };
      expect(userOps).to.have.length(1);
      const got = userOps[0]!;
      const expected = expectedUserOp(d.truth, op);
      const fields = [
        'userOpHash',
        'transactionHash',
        'sender',
        'target',
        'accountSender',
        'paymaster',
        'nonce',
        'success',
        'revertReason',
        'blockTime',
        'blockNumber',
        'network',
        'beneficiary',
        'factory',
        'initCode',
        'signature',
        'paymasterAndData',
        'callGasLimit',
        'verificationGasLimit',
        'preVerificationGas',
        'maxFeePerGas',
        'maxPriorityFeePerGas',
        'actualGasCost',
        'actualGasUsed',
        'entryPoint',
        'id',
      ];
      expect(got).to.deep.include(Object.fromEntries(fields.map((f) => [f, expected[f]])));
      // The library moves the subgraph's callData (the op's own) to preDecodedCallData.
      expect([got.callData, got.preDecodedCallData]).to.deep.equal(['', op.callData]);
      const transfers = (standard: string) => d.truth.transfers.filter((t) => t.userOpHash === op.userOpHash && t.standard === standard);
      expect(got.erc20Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.value])).to.deep.equal(
        transfers('ERC20').map((t) => [t.token, t.from, t.to, t.value]),
      );
      expect(got.erc721Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.tokenId])).to.deep.equal(
        transfers('ERC721')
          .slice(0, 10)
          .map((t) => [t.token, t.from, t.to, t.tokenId]),
      );
    }
    // Its query uses $first and $skip without declaring them.
    expect(sent.some((body) => body.includes('first: $first') && !body.includes('$first: Int'))).to.equal(true);
  });

  it('getAddressActivity answers the account and its page of ops in each block window', async () => {
    const account = d.truth.accounts.find((a) => d.truth.userOps.filter((o) => o.sender === a.address).length >= 6)!;
    const activity = d.truth.userOps
      .filter((o) => o.sender === account.address || o.calls[0]?.target === account.address)
      .sort(newestFirstById);
    const blocks = activity.map((o) => o.blockNumber);
    const [low, high] = [blocks[blocks.length - 2]!, blocks[1]!];
    const windows: Array<[number, number, (o: TruthUserOp) => boolean]> = [
      [0, 0, () => true],
      [low, high, (o) => o.blockNumber >= low && o.blockNumber <= high],
      [low, 0, (o) => o.blockNumber >= low],
      // start > end: no window at all, as the library reads it.
      [high, low, () => true],
    ];
    for (const [start, end, inWindow] of windows) {
      const { accountDetail } = (await client().getAddressActivity('mainnet', account.address as `0x${string}`, 3, 1, start, end)) as Json;
      const { userOps, ...detail } = accountDetail;
      expect(detail).to.deep.equal(expectedAccount(d.truth, account));
      const page = activity.filter(inWindow).slice(1, 4);
      expect(userOps.map((o: Json) => [o.userOpHash, o.blockNumber, o.sender, o.preDecodedCallData])).to.deep.equal(
        page.map((o) => [o.userOpHash, String(o.blockNumber), o.sender, undefined]),
      );
    }
    const stranger = (await client().getAddressActivity('mainnet', `0x${'5'.repeat(40)}`, 10, 0, 0, 0)) as Json;
    expect(stranger).to.deep.equal({ accountDetail: { userOps: [] } });
  });

  it('opscan/client answers the three operations as the published client does', async () => {
    const ours = createOpscanClient({ url: listening.origin, apiKey: d.key });
    const account = d.truth.accounts[1]!;
    const blocks = d.truth.userOps.map((o) => o.blockNumber).sort((a, b) => a - b);
    const [low, high] = [blocks[20]!, blocks[150]!];
    expect(await ours.getNetworkStatus('devnet')).to.deep.equal(await client().getNetworkStatus('mainnet'));
    for (const op of d.truth.userOps.slice(0, 5)) {
      expect(await ours.getUserOp('devnet', op.userOpHash)).to.deep.equal(
        await client().getUserOp('mainnet', op.userOpHash as `0x${string}`),
      );
    }
    for (const [first, skip, start, end] of [
      [5, 0, 0, 0],
      [2, 1, low, high],
      [3, 0, low, 0],
      [3, 0, high, low],
      [3, 0, 0, high],
    ] as const) {
      const theirs = await client().getAddressActivity('mainnet', account.address as `0x${string}`, first, skip, start, end);
      expect(await ours.getAddressActivity('devnet', account.address, first, skip, start, end), `${start}-${end}`).to.deep.equal(theirs);
    }
  });
});
