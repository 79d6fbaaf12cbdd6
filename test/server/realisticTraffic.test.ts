/**
 * Real-world traffic (devnet/realistic): ops that viem and permissionless built for real account
 * implementations, bundled by two Alto processes, sponsored or token-paid through Pimlico's
 * paymaster. opscan indexes the chain; every op's answers in /v0, /jiffyscan/v0 and GraphQL must
 * equal both truths, per account type: the generator's record of what it asked for, and the
 * bundler's own eth_getUserOperationReceipt. Webhooks for an ADDRESS and a PAYMASTER filter get
 * exactly the matching ops.
 */
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { decodeAbiParameters, decodeErrorResult, parseAbi, type Abi, type Hex } from 'viem';
import {
  generateRealistic,
  startRealisticDevnet,
  ACCOUNT_KINDS,
  ACCOUNT_TYPES,
  type DelegationRecord,
  type RealisticDevnet,
  type RealisticRecord,
} from '../../devnet/realistic/index.js';
import type { GroundTruth } from '../../devnet/index.js';
import { startIndexer } from '../../indexer/index.js';
import { allInOneEnvSchema, indexerEnvSchema, loadConfig } from '../../shared/config.js';
import * as outboxDeadLetters from '../../shared/db/tables/outboxDeadLetters.js';
import { createLogger } from '../../shared/log.js';
import { expectMatchesTruth } from '../indexer/storedTruth.js';
import { expectedEvents } from '../webhooks/support/expectedEvents.js';
import { useWebhookHarness } from '../webhooks/support/harness.js';
import { startReceiver, verifySignature } from '../webhooks/support/receiver.js';
import { expectedUserOp, pick } from './support/expected.js';
import { chainModulesByAccount, topModules } from './support/moduleTruth.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';
import { authorizationsOnChain, checkDelegationsAgainstChain, delegationAnswers } from '../indexer/support/delegationsOnChain.js';
import { useTestDb } from '../helpers/db.js';
import { describeRpcWithRealClients } from './support/rpcRealClients.js';
import { TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';
import { MODULAR_TYPES } from '../../devnet/realistic/modules.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Ops per run: 5 per account type by default (REALISTIC_OPS for a longer run), so each type gets its
 * deployment and every one of its execution modes (traffic.ts sends a type's modes in turn).
 */
const OPS = Number(process.env.REALISTIC_OPS ?? 5 * ACCOUNT_TYPES.length);

describe('real-world traffic: Alto bundlers, real accounts and paymasters (devnet --realistic)', function () {
  this.timeout(600_000);
  let rd: RealisticDevnet | undefined;
  let truth: GroundTruth;
  /** Made once, indexed twice (the API's database and the webhook harness's). */
  const traffic = async () => {
    if (!rd) {
      rd = await startRealisticDevnet({ seed: 11 });
      truth = structuredClone(await generateRealistic(rd, { ops: OPS }));
    }
    return { devnet: rd.devnet, truth, stop: async () => undefined };
  };
  after(async () => {
    await rd?.stop();
  });
  const records = (): RealisticRecord[] => rd!.records;

  describe('the generated mix', () => {
    before(traffic);

    it('has what real chains carry: every account type and EntryPoint version, deployments by initCode and by 7702, both paymaster modes, reverts, shared bundles, two bundlers', () => {
      const r = records();
      expect(r).to.have.length(OPS);
      expect(new Set(r.map((x) => x.accountType))).to.deep.equal(new Set(ACCOUNT_TYPES));
      expect(new Set(truth.userOps.map((o) => o.entryPointVersion))).to.deep.equal(new Set(['v0.6', 'v0.7', 'v0.8', 'v0.9']));
      expect(truth.accounts.length, 'accounts deployed through initCode').to.be.greaterThan(0);
      expect(r.filter((x) => x.eip7702).length, '7702 ops').to.be.greaterThan(0);
      expect(new Set(r.map((x) => x.paymasterMode))).to.deep.equal(new Set([null, 'verifying', 'erc20']));
      expect(
        r.some((x) => x.expectedOutcome === 'execution-revert'),
        'an op reverting in execution',
      ).to.equal(true);
      expect(
        r.some((x) => x.expectedOutcome === 'postop-revert' && x.postOpRevertReason),
        'a paymaster postOp reverting',
      ).to.equal(true);
      expect(
        r.some((x) => x.sentTo.length === 2),
        'an op both bundlers competed for',
      ).to.equal(true);
      const sharedBundle = truth.bundles.some(
        (b) => new Set(b.userOpHashes.map((h) => truth.userOps.find((o) => o.userOpHash === h)!.sender)).size < b.userOpHashes.length,
      );
      expect(sharedBundle, 'several ops of one sender (parallel nonce keys) in one bundle').to.equal(true);
      expect(
        r.some((x) => x.calls.length > 1),
        'a batch',
      ).to.equal(true);
      expect(new Set(truth.transfers.map((t) => t.standard))).to.deep.equal(new Set(['NATIVE', 'ERC20', 'ERC721', 'ERC1155']));
      expect(new Set(r.map((x) => x.bundlerReceipt.bundler)).size, 'executors of both bundlers').to.be.greaterThan(2);
      expect(
        truth.bundles.some((b) => b.userOpHashes.length > 1),
        'a bundle of several ops',
      ).to.equal(true);
      for (const type of ACCOUNT_TYPES) {
        const mine = r.filter((x) => x.accountType === type);
        expect(
          mine.some((x) => x.factory !== null || x.eip7702),
          `${type}: a deployment`,
        ).to.equal(true);
        expect(
          new Set(mine.filter((x) => x.expectedOutcome === 'success').map((x) => x.mode)),
          `${type}: its execution modes`,
        ).to.deep.equal(new Set(ACCOUNT_KINDS[type].modes));
        for (const x of mine) expect(x.implementation, `${type} ${x.userOpHash}`).to.equal(ACCOUNT_KINDS[type].implementation);
      }
      // Each op is recorded from the bundler's receipt; both truths agree on what was asked.
      for (const x of r) expect(x.bundlerReceipt.success, x.userOpHash).to.equal(x.expectedOutcome === 'success');
    });
  });

  describe('indexed and served', () => {
    const d = useIndexedDevnet({ traffic });
    const opOf = (hash: string) => truth.userOps.find((o) => o.userOpHash === hash)!;

    it('stores every op, bundle, account, transfer and daily metric as the truth has them', async () => {
      await expectMatchesTruth(d.db, truth, (got, want, what) => {
        // Item by item, so a difference names its op rather than drowning in a diff of all of them.
        if (Array.isArray(got) && Array.isArray(want)) {
          expect(got.length, `${what}: count`).to.equal(want.length);
          want.forEach((w, i) => expect(got[i], `${what}[${i}]`).to.deep.equal(w));
        } else expect(got, what).to.deep.equal(want);
      });
    });

    describe('EIP-7702 delegations', () => {
      const everyBlock = useTestDb();
      it("every 7702 authority's authorizations and delegate equal the chain's: its bundles' under ops, all under INDEXER_DELEGATIONS=all", async () => {
        const authorities = new Map<string, string>();
        for (const x of records().filter((r) => r.eip7702)) authorities.set(`${x.accountType} ${x.sender}`, x.sender.toLowerCase());
        for (const x of rd!.delegations) authorities.set(`lifecycle ${x.authority}`, x.authority.toLowerCase());
        const chain = {
          rpc: rd!.devnet.rpc,
          chainId: rd!.devnet.chainId,
          authorizations: await authorizationsOnChain(rd!.devnet.rpc, Object.values(truth.entryPoints)),
        };
        const ops = await delegationAnswers(d.db, authorities.values());
        await checkDelegationsAgainstChain(chain, authorities, ops, (a) => a.entryPointLogs);
        const indexer = startIndexer({
          db: everyBlock.db,
          config: loadConfig(indexerEnvSchema, {
            NETWORKS: 'devnet',
            RPC_URL_DEVNET: rd!.devnet.rpcUrl,
            START_BLOCK_DEVNET: '0',
            INDEXER_DELEGATIONS_DEVNET: 'all',
          }),
          log: createLogger({ level: 'silent', name: 'delegations' }),
        });
        try {
          await indexer.syncNow();
        } finally {
          await indexer.stop();
        }
        const all = await delegationAnswers(everyBlock.db, authorities.values());
        await checkDelegationsAgainstChain(chain, authorities, all, () => true);
        // The lifecycles: what the generator expected of each authorization, as opscan marks it, and
        // whether an op carried it (the bundle transaction the bundler's receipt names).
        const lifecycles = new Map<string, DelegationRecord[]>();
        for (const r of rd!.delegations)
          lifecycles.set(r.authority.toLowerCase(), [...(lifecycles.get(r.authority.toLowerCase()) ?? []), r]);
        expect([...lifecycles.values()].map((l) => l.map((r) => r.sentBy))).to.deep.equal([
          ['own', 'sponsored', 'sponsored', 'sponsored', 'own'],
          ['userOp', 'userOp', 'userOp'],
        ]);
        for (const [authority, sent] of lifecycles) {
          const history = all.get(authority)!.history.toReversed();
          expect(
            history.map((h) => [h.transactionHash, h.delegate, h.status, h.viaUserOp]),
            `lifecycle ${authority}`,
          ).to.deep.equal(sent.map((r) => [r.transactionHash, r.delegate?.toLowerCase() ?? null, r.expected, r.sentBy === 'userOp']));
          for (const r of sent.filter((x) => x.userOpHash))
            expect((await d.get('getUserOp', { network: 'devnet', hash: r.userOpHash! })).body.userOps[0].transactionHash).to.equal(
              r.transactionHash,
            );
        }
        // One cleared its delegation; the other is delegated to what its last op's authorization named,
        // under both modes (its every authorization rode a bundle).
        const [cleared, redelegated] = [...lifecycles.keys()];
        expect(all.get(cleared!)!.current).to.equal(null);
        const last = lifecycles.get(redelegated!)!.at(-1)!.delegate!.toLowerCase();
        expect([ops.get(redelegated!)!.current, all.get(redelegated!)!.current]).to.deep.equal([last, last]);
        expect(last).to.equal(rd!.delegationFramework.stateless7702DeleGator.toLowerCase());
      });
    });

    for (const type of ACCOUNT_TYPES) {
      it(`${type}: /v0 and /jiffyscan/v0 getUserOp equal the generator's record and the bundler's receipt`, async () => {
        const mine = records().filter((r) => r.accountType === type);
        expect(mine.length).to.be.greaterThan(0);
        for (const record of mine) {
          const op = opOf(record.userOpHash);
          const query = { network: 'devnet', hash: record.userOpHash };
          const spec = (await d.get('getUserOp', query)).body.userOps[0] as Json;
          const live = (await d.api().get('/jiffyscan/v0/getUserOp').query(query).set('x-api-key', d.key)).body.userOps[0] as Json;
          const want = expectedUserOp(truth, op);
          expect(pick(spec, want), `${type} ${record.userOpHash}`).to.deep.equal(want);
          // The generator's record: what it asked for.
          expect({ sender: spec.sender, targets: spec.targets, values: spec.values, callDatas: spec.callDatas }).to.deep.equal({
            sender: record.sender,
            targets: record.calls.map((c) => c.target),
            values: record.calls.map((c) => c.value),
            callDatas: record.calls.map((c) => c.data),
          });
          expect(spec.paymaster).to.equal(record.paymaster ?? ZERO_ADDRESS);
          expect(spec.factory).to.equal(record.factory ?? '0x');
          expect(spec.eip7702, 'the 7702 flag').to.equal(record.eip7702);
          // The implementation the indexer named from the chain, against the one the generator built.
          expect({ spec: spec.implementation, live: live.implementation }, `${type} ${record.userOpHash}: implementation`).to.deep.equal({
            spec: record.implementation,
            live: record.implementation,
          });
          expect(spec.paymasterRevertReason ?? null, 'the paymaster postOp revert').to.equal(record.postOpRevertReason);
          // The bundler's receipt.
          const receipt = record.bundlerReceipt;
          expect({
            success: spec.success,
            actualGasCost: spec.actualGasCost,
            actualGasUsed: spec.actualGasUsed,
            transactionHash: spec.transactionHash,
            blockNumber: spec.blockNumber,
            bundler: spec.bundler,
          }).to.deep.equal({
            success: receipt.success,
            actualGasCost: receipt.actualGasCost,
            actualGasUsed: receipt.actualGasUsed,
            transactionHash: receipt.transactionHash,
            blockNumber: String(receipt.blockNumber),
            bundler: receipt.bundler,
          });
          // The live dialect: the calls as arrays, the op's token transfers.
          expect({ target: live.target, value: live.value, callData: live.callData }).to.deep.equal({
            target: spec.targets,
            value: spec.values,
            callData: spec.callDatas,
          });
          const made = truth.transfers.filter((t) => t.userOpHash === record.userOpHash);
          expect(live.erc20Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.value])).to.deep.equal(
            made.filter((t) => t.standard === 'ERC20').map((t) => [t.token, t.from, t.to, t.value]),
          );
          expect(live.erc721Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.tokenId])).to.deep.equal(
            made.filter((t) => t.standard === 'ERC721' || t.standard === 'ERC1155').map((t) => [t.token, t.from, t.to, t.tokenId]),
          );
        }
      });

      it(`${type}: /jiffyscan/v0's execution trace is rooted at the account and lists the op's own calls; /v0 keeps the frames`, async () => {
        const asCall = (n: Json) => [n.traceData.to, BigInt(n.traceData.value ?? '0x0').toString(), n.traceData.input];
        const mine = records().filter((r) => r.accountType === type);
        // Safe batches through a DELEGATECALL into MultiSendCallOnly: a batch is what shows that hop folded.
        if (type === 'safe')
          expect(
            mine.some((r) => r.expectedOutcome === 'success' && r.calls.length > 1),
            'a Safe batch',
          ).to.equal(true);
        for (const record of mine) {
          const query = { userOpHash: record.userOpHash };
          const live = (await d.api().get('/jiffyscan/v0/getUserOpMetadata').query(query).set('x-api-key', d.key)).body as Json;
          const spec = (await d.get('getUserOpMetadata', query)).body as Json;
          const what = `${type} ${record.userOpHash}`;
          expect(spec.executionTrace.traceData.to, what).to.equal(record.entryPoint.toLowerCase());
          expect(live.executionTrace.traceData, what).to.include({
            from: record.entryPoint.toLowerCase(),
            to: record.sender,
            executionCall: true,
          });
          // The explorer's Target row: the record's calls, whatever the proxy, module or MultiSend hops between.
          if (record.expectedOutcome === 'success') {
            expect(live.executionTrace.next.map(asCall), what).to.deep.equal(record.calls.map((c) => [c.target, c.value, c.data]));
          }
        }
      });

      it(`${type}: each account's detail in /v0 and its GraphQL Account name the generator's implementation`, async () => {
        const senders = [
          ...new Set(
            records()
              .filter((r) => r.accountType === type)
              .map((r) => r.sender),
          ),
        ];
        const implementationOf = new Map(records().map((r) => [r.sender, r.implementation]));
        const res = await d
          .api()
          .post('/subgraphs/name/devnet')
          .set('x-api-key', d.key)
          .send({ query: `{ ${senders.map((s, i) => `a${i}: account(id: "${s}") { id implementation }`).join(' ')} }` });
        expect(res.body.errors).to.equal(undefined);
        expect(senders.map((_, i) => res.body.data[`a${i}`])).to.deep.equal(
          senders.map((s) => ({ id: s, implementation: implementationOf.get(s) })),
        );
        for (const sender of senders) {
          const detail = (await d.get('getAddressActivity', { network: 'devnet', address: sender })).body.accountDetail as Json;
          expect(detail.implementation, `${type} ${sender}`).to.equal(implementationOf.get(sender));
        }
      });

      it(`${type}: the GraphQL UserOp entities equal both truths`, async () => {
        for (const record of records().filter((r) => r.accountType === type)) {
          const op = opOf(record.userOpHash);
          const res = await d
            .api()
            .post('/subgraphs/name/devnet')
            .set('x-api-key', d.key)
            .send({
              query: `{ userOp(id: "${op.userOpHash}-${op.logIndex}") { userOpHash sender target paymaster factory success actualGasCost actualGasUsed transactionHash revertReason callData } }`,
            });
          expect(res.body.errors).to.equal(undefined);
          expect(res.body.data.userOp).to.deep.equal({
            userOpHash: record.userOpHash,
            sender: record.sender,
            target: record.calls[0]?.target ?? null,
            paymaster: record.paymaster ?? ZERO_ADDRESS,
            factory: record.factory ?? '0x',
            success: record.bundlerReceipt.success,
            actualGasCost: record.bundlerReceipt.actualGasCost,
            actualGasUsed: record.bundlerReceipt.actualGasUsed,
            transactionHash: record.bundlerReceipt.transactionHash,
            revertReason: op.revertReason,
            callData: op.callData,
          });
        }
      });
    }

    it("answers every ERC-7579 account's modules and their history as the chain's ModuleInstalled / ModuleUninstalled logs have them: /v0, GraphQL, accountDetail, getTopModules", async () => {
      const onChain = await chainModulesByAccount(rd!.devnet.rpc);
      // What the generator asked for is what the chain shows, op by op (Kernel v3.3 emits an
      // executor's ModuleInstalled twice: a repeat is one change).
      for (const r of records().filter((x) => x.moduleChanges.length > 0)) {
        const events = (onChain.get(r.sender)?.history ?? [])
          .filter((e) => e.userOpHash === r.userOpHash)
          .map((e) => ({ action: e.action, moduleTypeId: Number(e.moduleTypeId), module: e.module }));
        expect(
          events.filter((e, i) => i === 0 || JSON.stringify(e) !== JSON.stringify(events[i - 1])),
          `${r.accountType} ${r.userOpHash}`,
        ).to.deep.equal(r.moduleChanges.map((c) => ({ action: `${c.action}ed`, moduleTypeId: c.moduleTypeId, module: c.module })));
      }
      for (const type of MODULAR_TYPES) {
        const changes = records()
          .filter((x) => x.accountType === type)
          .flatMap((x) => x.moduleChanges);
        expect(new Set(changes.map((c) => `${c.action} ${c.moduleTypeId}`)), `${type}: its module changes`).to.deep.equal(
          new Set(['install 2', 'uninstall 2', ...(type === 'oz7579' ? [] : ['install 4'])]),
        );
      }
      const modular = rd!.accounts
        .filter((a) => (ACCOUNT_KINDS[a.type].modes as readonly string[]).includes('delegatecall'))
        .map((a) => a.address);
      const accounts = [...new Set([...modular, ...onChain.keys()])];
      expect(
        [...onChain.values()].some((m) => m.history.some((e) => e.moduleType === 'validator')),
        'validators installed at deployment',
      ).to.equal(true);
      for (const address of accounts) {
        const want = onChain.get(address) ?? { modules: [], history: [] };
        const rest = await d.get('getAccountModules', { network: 'devnet', address });
        expect(rest.status, address).to.equal(200);
        expect(rest.body, `${address}: /v0`).to.deep.equal(want);
        const graphql = await d
          .api()
          .post('/subgraphs/name/devnet')
          .set('x-api-key', d.key)
          .send({
            query: `{ accountModules(address: "${address}") { address network modules { moduleTypeId moduleType module installedAt { blockNumber blockTime transactionHash userOpHash } } history { action moduleTypeId moduleType module blockNumber blockTime transactionHash userOpHash } } }`,
          });
        expect(graphql.body.errors, address).to.equal(undefined);
        expect(graphql.body.data.accountModules, `${address}: GraphQL`).to.deep.equal({ address, network: 'devnet', ...want });
        const detail = (await d.get('getAddressActivity', { network: 'devnet', address, first: 1 })).body.accountDetail as Json;
        expect(detail.modules, `${address}: accountDetail`).to.deep.equal(want.modules);
      }
      const top = await d.get('getTopModules', { network: 'devnet', first: 100 });
      expect(top.body.modules, 'getTopModules').to.deep.equal(topModules(onChain));
      const graphqlTop = await d
        .api()
        .post('/subgraphs/name/devnet')
        .set('x-api-key', d.key)
        .send({ query: '{ modules(first: 100) { module moduleTypeIds moduleTypes accountsLength } }' });
      expect(graphqlTop.body.data.modules, 'GraphQL modules').to.deep.equal(topModules(onChain));
    });
  });

  describe('why failed ops failed', () => {
    const d = useIndexedDevnet({ traffic });

    it("every failed op's failure in /v0 getUserOp, getUserOpMetadata and GraphQL equals the chain's revert event and the record", async () => {
      const failed = records().filter((r) => r.expectedOutcome !== 'success');
      expect(new Set(failed.map((r) => r.expectedFailure?.kind)), 'the kinds of failure sent').to.deep.equal(
        new Set(['Error', 'custom', 'Panic', 'empty', 'unknown']),
      );
      for (const record of failed) {
        const op = truth.userOps.find((o) => o.userOpHash === record.userOpHash)!;
        const want = await failureOnChain(rd!, op.blockNumber, record.userOpHash);
        const query = { network: 'devnet', userOpHash: record.userOpHash };
        // getUserOpMetadata first: it traces the op on the node and stores the trace GraphQL reads.
        const fromMetadata = (await d.get('getUserOpMetadata', query)).body.failure as Json;
        const fromGetUserOp = (await d.get('getUserOp', { network: 'devnet', hash: record.userOpHash })).body.userOps[0].failure as Json;
        const graphql = await d
          .api()
          .post('/subgraphs/name/devnet')
          .set('x-api-key', d.key)
          .send({
            query: `{ userOp(id: "${op.userOpHash}-${op.logIndex}") { failure { stage kind name message selector data args { name type value } wrappers { name } frame { to selector method depth error } } } }`,
          });
        expect(graphql.body.errors).to.equal(undefined);
        const fromGraphql = graphql.body.data.userOp.failure as Json;
        const what = `${record.accountType} ${record.userOpHash}`;
        for (const [where, failure] of [
          ['getUserOpMetadata', fromMetadata],
          ['getUserOp', fromGetUserOp],
          ['GraphQL', fromGraphql],
        ] as const) {
          const argValues =
            (failure.args as Json[] | null)?.map((a) => (typeof a.value === 'string' ? a.value : JSON.stringify(a.value))) ?? null;
          // The chain: the EntryPoint's revert event read with eth_getLogs, decoded with viem.
          expect(
            {
              kind: failure.kind,
              name: failure.name,
              data: failure.data,
              wrappers: failure.wrappers.map((w: Json) => w.name),
              args: argValues,
            },
            `${where}: ${what}`,
          ).to.deep.equal(want.decoded);
          // The record: what the generator asked for.
          expect({ kind: failure.kind, name: failure.name, args: argValues }, `${where}: ${what} as sent`).to.deep.equal(
            record.expectedFailure,
          );
          // v0.6 emits no event for a postOp: the stage then comes from the trace, stored by now.
          expect(failure.stage, `${where}: ${what}`).to.equal(record.expectedOutcome === 'postop-revert' ? 'postOp' : 'execution');
          // The call that raised it: the reverter in execution; the paymaster when its token transfer failed.
          if (failure.kind !== 'empty' || record.expectedOutcome === 'execution-revert') {
            const raiser = record.expectedOutcome === 'postop-revert' ? record.paymaster : rd!.base.reverter.toLowerCase();
            expect(failure.frame?.to, `${where}: ${what} frame`).to.equal(raiser);
          }
        }
        expect(fromGetUserOp).to.deep.equal(fromMetadata);
      }
    });
  });

  describe('webhooks', () => {
    const h = useWebhookHarness();

    it('deliver exactly the matching ops for an ADDRESS (a Safe) and a PAYMASTER filter, signed', async () => {
      await traffic();
      const receiver = await startReceiver();
      const indexer = { current: undefined as { stop(): Promise<void>; syncNow(): Promise<unknown> } | undefined };
      try {
        const safe = records().find((r) => r.accountType === 'safe' && r.factory)!.sender;
        const paymaster = records().find((r) => r.paymasterMode === 'erc20')!.paymaster!;
        const hooks = [];
        for (const [filter, x] of [
          ['ADDRESS', safe],
          ['PAYMASTER', paymaster],
        ] as const) {
          const expected = expectedEvents(truth, filter, x);
          expect(expected.size, `${filter} ${x} matches something`).to.be.greaterThan(0);
          hooks.push({ filter, x, expected, ...(await h.createWebhook(`${receiver.url}/${filter}`, filter, x)) });
        }
        const total = hooks.reduce((n, w) => n + w.expected.size, 0);
        await h.startDispatcher();
        const config = loadConfig(allInOneEnvSchema, {
          NETWORKS: 'devnet',
          RPC_URL_DEVNET: rd!.devnet.rpcUrl,
          START_BLOCK_DEVNET: '0',
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          LOG_LEVEL: 'silent',
        });
        indexer.current = startIndexer({ db: h.db, config, log: createLogger({ level: 'silent', name: 'indexer' }) });
        await indexer.current.syncNow();
        // Delivery is at least once: a delivery whose answer the dispatcher did not see in time (a
        // loaded machine) is sent again with the same webhook-id, which a receiver drops. Each
        // webhook-id counts once; an event delivered under two ids would still show twice.
        await receiver.waitFor(() => receiver.delivered().size >= total, 120_000);
        await new Promise((r) => setTimeout(r, 500));
        for (const hook of hooks) {
          const mine = [...receiver.delivered().values()].filter((r) => (JSON.parse(r.body) as Json).webhookId === hook.id);
          const got = mine.map((r) => {
            const body = JSON.parse(r.body) as Json;
            return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
          });
          expect(got.sort(), `${hook.filter} ${hook.x}`).to.deep.equal([...hook.expected].sort());
          for (const r of mine) verifySignature(hook.secret, r);
        }
        // An op's (or deployment's) body names the sender's implementation as known when it was built:
        // the generator's, or null when the naming pass had not reached the account yet; never another.
        const implementationOf = new Map(records().map((r) => [r.userOpHash, r.implementation]));
        let checked = 0;
        for (const r of receiver.received) {
          const body = JSON.parse(r.body) as Json;
          const named = { user_operation: body.data.userOp as Json, account_deployed: body.data as Json }[body.type as string];
          if (!named) continue;
          const { userOpHash, implementation } = named;
          expect([null, implementationOf.get(userOpHash)], `webhook body of ${userOpHash}`).to.include(implementation);
          checked++;
        }
        expect(checked, 'op and deployment bodies').to.be.greaterThan(0);
        expect(await outboxDeadLetters.listByChain(h.db, rd!.devnet.chainId)).to.deep.equal([]);
      } finally {
        await indexer.current?.stop();
        await receiver.close();
      }
    });
  });

  describe('a second generateRealistic call on the same chain', () => {
    before(traffic);

    it("plans from the chain's accounts, not the generator's memory: those deployed or delegated there count as deployed, and its ops land", async () => {
      // What a call that failed mid-wave leaves behind: accounts the chain has deployed (or whose
      // EOA it has delegated) that the generator still believes new.
      const forgotten = rd!.accounts.filter((a) => a.deployed);
      expect(
        forgotten.some((a) => a.delegate !== null),
        'a 7702 account among them',
      ).to.equal(true);
      for (const a of forgotten) a.deployed = false;
      const recordedBefore = rd!.records.length;
      await generateRealistic(rd!, { ops: 8 });
      expect(forgotten.filter((a) => !a.deployed).map((a) => a.address)).to.deep.equal([]);
      const added = rd!.records.slice(recordedBefore);
      expect(added).to.have.length(8);
      expect(added.filter((r) => r.expectedOutcome === 'success' && !r.bundlerReceipt.success).map((r) => r.userOpHash)).to.deep.equal([]);
    });
  });

  describeRpcWithRealClients(() => rd!, traffic);
});

const ERRORS_ON_CHAIN: Abi = [
  ...(createRequire(import.meta.url)('ep08/artifacts/EntryPoint.json') as { abi: Abi }).abi.filter((i) => i.type === 'error'),
  ...(createRequire(import.meta.url)('ep08/artifacts/BaseAccount.json') as { abi: Abi }).abi.filter((i) => i.type === 'error'),
  ...parseAbi(['error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)', 'error TransferFromFailed()']),
];

/**
 * An op's failure as the chain shows it: its UserOperationRevertReason or PostOpRevertReason read
 * with eth_getLogs, the revert data decoded by viem (Error, Panic and the errors above), the
 * EntryPoint's and v0.8 accounts' wrappers unwrapped; an error viem cannot decode is unknown.
 */
async function failureOnChain(rd: RealisticDevnet, blockNumber: number, userOpHash: string) {
  const block = `0x${blockNumber.toString(16)}`;
  const [logs] = await rd.devnet.rpc.batch<Array<{ data: Hex }>>([
    [
      'eth_getLogs',
      [{ fromBlock: block, toBlock: block, topics: [[TOPICS.userOperationRevertReason, TOPICS.postOpRevertReason], userOpHash] }],
    ],
  ]);
  const data = logs![0] ? decodeAbiParameters([{ type: 'uint256' }, { type: 'bytes' }], logs![0].data)[1] : '0x';
  const wrappers: string[] = [];
  let current: Hex = data;
  for (;;) {
    if (current === '0x') return { decoded: { kind: 'empty', name: null, data: current, wrappers, args: null } };
    let error;
    try {
      error = decodeErrorResult({ abi: ERRORS_ON_CHAIN, data: current });
    } catch {
      return { decoded: { kind: 'unknown', name: null, data: current, wrappers, args: null } };
    }
    const args = (error.args ?? []) as unknown[];
    const inner = error.abiItem.type === 'error' ? error.abiItem.inputs.findIndex((p) => p.type === 'bytes') : -1;
    if (inner >= 0) {
      wrappers.push(error.errorName);
      current = (args[inner] as Hex).toLowerCase() as Hex;
      continue;
    }
    const kind = error.errorName === 'Error' ? 'Error' : error.errorName === 'Panic' ? 'Panic' : 'custom';
    const values = args.map((a) => (typeof a === 'string' && a.startsWith('0x') ? a.toLowerCase() : String(a)));
    return { decoded: { kind, name: error.errorName, data: current, wrappers, args: values } };
  }
}
