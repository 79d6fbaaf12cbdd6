/**
 * The ERC-4337 RPC (/rpc/<network>) against the real clients and a real bundler, on the realistic
 * devnet's traffic: for every op, viem's bundler client reading opscan gets what it gets reading
 * Alto, and opscan's raw answers hold every field Alto's hold, equal; permissionless' smart account
 * client with its bundler transport pointed at opscan alone sends an op and waits for its receipt;
 * an Alto with a short look-back answers null for an old op that opscan still answers.
 */
import { expect } from 'chai';
import { HDNodeWallet } from 'ethers';
import { createSmartAccountClient } from 'permissionless';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import { http } from 'viem';
import { createBundlerClient } from 'viem/account-abstraction';
import { ANVIL_MNEMONIC } from '../../../devnet/chain.js';
import type { RealisticDevnet } from '../../../devnet/realistic/index.js';
import { startBundler, type Bundler } from '../../../devnet/realistic/bundler.js';
import { devnetChain } from '../../../devnet/realistic/contracts.js';
import type { Deps } from '../../../server/context.js';
import { testDeps, useListeningApp } from '../../helpers/app.js';
import { startDevnetIndexer, useIndexedDevnet, type Traffic } from './indexedDevnet.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Every field of `want` is in `got`, equal (arrays item by item): opscan answers Alto's fields and
 * the node's receipt fields Alto leaves out (type, blobGasPrice, a log's removed and blockTimestamp).
 */
function expectHolds(got: unknown, want: unknown, path: string): void {
  if (want && typeof want === 'object') {
    expect(got, path).to.be.an(Array.isArray(want) ? 'array' : 'object');
    if (Array.isArray(want)) expect((got as unknown[]).length, `${path}.length`).to.equal(want.length);
    // viem's formatters write a field the answer lacks as undefined or null (a receipt's type): not a field.
    for (const [k, v] of Object.entries(want)) if (v !== undefined && v !== null) expectHolds((got as Json)[k], v, `${path}.${k}`);
  } else expect(got, path).to.equal(want);
}

async function rawCall(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** anvil's accounts 7-10 are used by no part of the realistic devnet: the executors and utility keys of the two Altos started here. */
const anvilKey = (i: number): { key: string; address: string } => {
  const w = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0").deriveChild(i);
  return { key: w.privateKey, address: w.address };
};

/** Blocks the short-look-back Alto searches. */
const SHORT_RANGE = 5;

export function describeRpcWithRealClients(devnet: () => RealisticDevnet, traffic: () => Promise<Traffic>): void {
  describe('the ERC-4337 RPC with viem, permissionless and Alto', function () {
    this.timeout(600_000);
    const d = useIndexedDevnet({ traffic });
    let depsWithBundler: Deps | undefined;
    const indexOnly = useListeningApp(() => d.deps);
    const withBundler = useListeningApp(() => (depsWithBundler = testDeps(d.db, { BUNDLER_URL_DEVNET: devnet().bundlers[0]!.url })));
    /** An Alto that searches the whole chain (the reference: no memory of the traffic's ops) and one that searches SHORT_RANGE blocks. */
    let wide: Bundler | undefined;
    let short: Bundler | undefined;
    before(async () => {
      const rd = devnet();
      const start = (name: string, exec: number, utility: number, maxBlockRange: number) =>
        startBundler({
          name,
          rpcUrl: rd.devnet.rpcUrl,
          entryPoints: Object.values(rd.contracts.entryPoints),
          executorKeys: [anvilKey(exec).key],
          executorAddresses: [anvilKey(exec).address],
          utilityKey: anvilKey(utility).key,
          maxBlockRange,
        });
      [wide, short] = await Promise.all([start('alto-wide', 7, 8, 1_000_000), start('alto-short', 9, 10, SHORT_RANGE)]);
    });
    after(async () => {
      await Promise.all([wide?.stop(), short?.stop(), depsWithBundler?.services.close()]);
    });
    const opscanUrl = (origin: string) => `${origin}/rpc/devnet?apikey=${d.key}`;

    it("every op: viem's bundler client reads from opscan what it reads from Alto, and opscan's receipt is the node's", async () => {
      const rd = devnet();
      const chain = devnetChain(rd.devnet);
      const fromAlto = createBundlerClient({ chain, transport: http(wide!.url) });
      const fromOpscan = createBundlerClient({ chain, transport: http(opscanUrl(indexOnly.origin)) });
      expect(rd.records.length).to.be.greaterThan(0);
      let altoCannotRead = 0;
      for (const { userOpHash } of rd.records) {
        const hash = userOpHash;
        // What viem makes of each answer: Alto's, and the fields the node adds beside them (its receipt is the node's whole).
        expectHolds(
          await fromOpscan.getUserOperationReceipt({ hash }),
          await fromAlto.getUserOperationReceipt({ hash }),
          `${hash}: receipt`,
        );
        const altoOp = await rawCall(wide!.url, 'eth_getUserOperationByHash', [hash]);
        const ourOp = (await rawCall(opscanUrl(indexOnly.origin), 'eth_getUserOperationByHash', [hash])) as Json;
        if (altoOp === null) {
          // Alto cannot read back an op whose initCode is the bare EIP-7702 marker; opscan can.
          expect(ourOp.userOperation.factory, `${hash}: an op Alto cannot read`).to.equal('0x7702');
          expect((await fromOpscan.getUserOperation({ hash })).userOperation.factory, `${hash} through viem`).to.equal('0x7702');
          altoCannotRead++;
        } else {
          expectHolds(await fromOpscan.getUserOperation({ hash }), await fromAlto.getUserOperation({ hash }), `${hash}: op`);
        }
        for (const [method, alto] of [
          ['eth_getUserOperationReceipt', await rawCall(wide!.url, 'eth_getUserOperationReceipt', [hash])],
          ['eth_getUserOperationByHash', altoOp],
        ] as const) {
          if (alto === null) continue;
          const ours = (await rawCall(opscanUrl(indexOnly.origin), method, [hash])) as Json;
          expectHolds(ours, alto, `${method} ${hash}`);
          // Only the node's receipt has fields Alto leaves out: the op's own are the same set.
          const fields = (o: Json) => Object.keys(o.userOperation ?? o).sort();
          expect(fields(ours), `${method} ${hash}: fields`).to.deep.equal(fields(alto as Json));
        }
        const { receipt } = (await rawCall(opscanUrl(indexOnly.origin), 'eth_getUserOperationReceipt', [hash])) as Json;
        const node = await rawCall(rd.devnet.rpcUrl, 'eth_getTransactionReceipt', [receipt.transactionHash]);
        // Addresses are checksummed as bundlers write them, lower-case from the node.
        expect(JSON.parse(JSON.stringify(receipt).toLowerCase()), `${hash}: the node's receipt`).to.deep.equal(
          JSON.parse(JSON.stringify(node).toLowerCase()),
        );
      }
      expect(altoCannotRead, 'ops Alto cannot read back').to.be.lessThan(rd.records.length / 4);
      expect(await fromOpscan.getSupportedEntryPoints()).to.have.members(await fromAlto.getSupportedEntryPoints());
      expect(await fromOpscan.getChainId()).to.equal(await fromAlto.getChainId());
    });

    it("permissionless' smart account client, its bundler transport and gas prices at opscan alone, sends an op and gets its receipt", async () => {
      const rd = devnet();
      const chain = devnetChain(rd.devnet);
      const account = rd.accounts.find((a) => a.type === 'simple-v0.7' && a.deployed);
      expect(account, 'a deployed simple-v0.7 account').to.not.equal(undefined);
      const transport = http(opscanUrl(withBundler.origin));
      const pimlico = createPimlicoClient({ chain, transport, entryPoint: { address: rd.contracts.entryPoints['v0.7'], version: '0.7' } });
      const client = createSmartAccountClient({
        account: account!.sdk,
        chain,
        client: rd.operator.public,
        bundlerTransport: transport,
        userOperation: { estimateFeesPerGas: async () => (await pimlico.getUserOperationGasPrice()).fast },
      });
      const hash = await client.sendUserOperation({ calls: [{ to: account!.address, value: 0n, data: '0x' }] });
      const receipt = await client.waitForUserOperationReceipt({ hash, timeout: 120_000 });
      expect(receipt.success).to.equal(true);
      expect(receipt.userOpHash).to.equal(hash);

      // Once indexed, the index answers it (no bundler configured), as Alto does.
      const indexer = startDevnetIndexer(d.db, rd.devnet.rpcUrl);
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
      const indexed = await rawCall(opscanUrl(indexOnly.origin), 'eth_getUserOperationReceipt', [hash]);
      expectHolds(indexed, await rawCall(wide!.url, 'eth_getUserOperationReceipt', [hash]), 'indexed receipt');
    });

    it('an op older than a bundler’s look-back: that Alto answers null, opscan answers it', async () => {
      const rd = devnet();
      const [oldest] = rd.records;
      const head = await rd.devnet.rpc.call<string>('eth_blockNumber');
      const receipt = (await rawCall(wide!.url, 'eth_getUserOperationReceipt', [oldest!.userOpHash])) as Json;
      const age = Number(BigInt(head) - BigInt(receipt.receipt.blockNumber));
      if (age <= SHORT_RANGE) await rd.devnet.rpc.call('anvil_mine', [`0x${(SHORT_RANGE + 1).toString(16)}`]);
      for (const method of ['eth_getUserOperationReceipt', 'eth_getUserOperationByHash']) {
        expect(await rawCall(short!.url, method, [oldest!.userOpHash]), `${method} from the short-look-back Alto`).to.equal(null);
        expectHolds(
          await rawCall(opscanUrl(indexOnly.origin), method, [oldest!.userOpHash]),
          await rawCall(wide!.url, method, [oldest!.userOpHash]),
          `${method} from opscan`,
        );
      }
    });
  });
}
