import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { TruthUserOp } from '../../devnet/index.js';
import { createApp } from '../../server/app.js';
import type { Db } from '../../shared/db/client.js';
import * as blocks from '../../shared/db/tables/blocks.js';
import { createTestKey } from '../helpers/app.js';
import { withChromium } from '../helpers/chromium.js';
import { expectedUserOp, sumOf } from './support/expected.js';
import { chainBlock, expectedAccount, newestFirstById } from './support/expectedSubgraph.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Answer = { status: number; data?: Json; errors?: Array<{ message: string; locations?: unknown; path?: unknown }> };

const newestFirst = newestFirstById;
const firstTarget = (op: TruthUserOp) => op.calls[0]?.target ?? null;

/**
 * Fields of the /v0 UserOp the subgraph's has not, or has in another shape: its accountTarget is the
 * target's Account (null for a contract) where /v0 answers `{factory}`.
 */
const V0_ONLY_FIELDS = ['status', 'chainId', 'preDecodedCallData', 'targets', 'values', 'callDatas', 'accountTarget'];

describe('subgraph-style GraphQL on indexed devnet traffic', () => {
  const d = useIndexedDevnet({ ops: 300, days: 3, seed: 11 });

  async function gql(query: string, variables?: Record<string, unknown>, path = '/subgraphs/name/devnet'): Promise<Answer> {
    const res = await d.api().post(path).set('x-api-key', d.key).send({ query, variables });
    return { status: res.status, ...(res.body as object) };
  }

  /** Data of a query that must succeed. */
  async function data(query: string, variables?: Record<string, unknown>): Promise<Json> {
    const answer = await gql(query, variables);
    expect(answer.errors, JSON.stringify(answer.errors)).to.equal(undefined);
    expect(answer.status).to.equal(200);
    return answer.data!;
  }

  /** A query that must be refused with a GraphQL error (never a 500, never a hang). */
  async function refused(query: string, variables?: Record<string, unknown>): Promise<string> {
    const started = Date.now();
    const answer = await gql(query, variables);
    expect(answer.status).to.be.oneOf([200, 400]);
    expect(answer.errors, 'errors').to.be.an('array').with.length.above(0);
    expect(Date.now() - started).to.be.below(3000);
    return answer.errors![0]!.message;
  }

  describe('the spec sample and the published client library queries', () => {
    it('answers the spec sample GetUserOpHash($userOpHash: Bytes)', async () => {
      const op = d.truth.userOps[17]!;
      const result = await data(
        `query GetUserOpHash($userOpHash: Bytes) { userOps(where: {userOpHash: $userOpHash}) { verificationGasLimit userOpHash transactionHash } }`,
        { userOpHash: op.userOpHash.toUpperCase().replace('0X', '0x') },
      );
      expect(result.userOps).to.deep.equal([
        { verificationGasLimit: op.verificationGasLimit, userOpHash: op.userOpHash, transactionHash: op.transactionHash },
      ]);
    });

    it('answers the request id the caller sent (as REST and tRPC do), else a new one', async () => {
      const query = '{ _meta { deployment } }';
      const given = await d
        .api()
        .post('/subgraphs/name/devnet')
        .set('x-api-key', d.key)
        .set('x-request-id', 'trace-abc_123')
        .send({ query });
      expect(given.headers['x-request-id']).to.equal('trace-abc_123');
      const fresh = await d.api().post('/subgraphs/name/devnet').set('x-api-key', d.key).send({ query });
      expect(fresh.headers['x-request-id']).to.match(/^[\w-]{8,}$/);
    });

    it('answers every field of an op, BigInts and Bytes as strings, with its transfers and accounts', async () => {
      const withTransfers = d.truth.userOps.filter((o) =>
        d.truth.transfers.some((t) => t.userOpHash === o.userOpHash && t.standard === 'ERC20'),
      );
      for (const op of [...withTransfers.slice(0, 3), ...d.truth.userOps.filter((o) => !o.success).slice(0, 2), d.truth.userOps[0]!]) {
        // The /v0 UserOp's values, less the fields the subgraph has not; its callData is the op's own.
        const common = Object.entries(expectedUserOp(d.truth, op)).filter(([k]) => !V0_ONLY_FIELDS.includes(k));
        const expected = { ...Object.fromEntries(common), callData: op.callData };
        const selection = Object.keys(expected)
          .map((k) => (k === 'accountSender' ? 'accountSender { factory }' : k))
          .join(' ');
        // The client library's query: $first and $skip are used without being declared.
        const result = await data(
          `query GetUserOpHashDetails($userOpHash: Bytes) {
            userOps(first: $first, skip: $skip, orderBy: blockTime, orderDirection: desc, where: {userOpHash: $userOpHash}) {
              ${selection} bundle { transactionHash bundleIndex }
              erc20Transfers { contractAddress from to value decimals symbol }
              erc721Transfers(first: 10) { contractAddress from to tokenId }
            }
          }`,
          { userOpHash: op.userOpHash },
        );
        const transfers = (standard: string) => d.truth.transfers.filter((t) => t.userOpHash === op.userOpHash && t.standard === standard);
        expect(result.userOps).to.have.length(1);
        const got = result.userOps[0];
        expect(got).to.deep.include(expected);
        expect(got.bundle).to.deep.equal({ transactionHash: op.transactionHash, bundleIndex: op.bundleIndex });
        expect(got.erc20Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.value])).to.deep.equal(
          transfers('ERC20').map((t) => [t.token, t.from, t.to, t.value]),
        );
        expect(got.erc20Transfers.every((t: Json) => typeof t.decimals === 'number' && typeof t.symbol === 'string')).to.equal(true);
        expect(got.erc721Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.tokenId])).to.deep.equal(
          transfers('ERC721')
            .slice(0, 10)
            .map((t) => [t.token, t.from, t.to, t.tokenId]),
        );
      }
    });

    it("answers the client library's address-activity query in its three block-window forms", async () => {
      const account = d.truth.accounts[2]!;
      const address = account.address;
      const activity = d.truth.userOps.filter((o) => o.sender === address || firstTarget(o) === address).sort(newestFirst);
      const blocks = activity.map((o) => o.blockNumber);
      const [low, high] = [blocks[blocks.length - 2]!, blocks[1]!];
      const opFields = 'id sender target actualGasCost transactionHash success blockNumber userOpHash nonce entryPoint';
      const head = `accounts(where: {address: $address}) { id address blockNumber blockTime factory paymaster transactionHash userOpHash userOpsCount }
        deposits(where: {account: $address}) { totalDeposit }`;
      const forms: Array<[string, string, (o: TruthUserOp) => boolean]> = [
        ['$address: Bytes, $first: Int, $skip: Int', '{ or: [{ sender: $address }, { target: $address }] }', () => true],
        [
          '$address: Bytes, $first: Int, $skip: Int, $start_block: Int, $end_block: Int',
          '{ and: [ {or: [{sender: $address}, {target: $address}]}, {blockNumber_gte: $start_block}, {blockNumber_lte: $end_block}, ] }',
          (o) => o.blockNumber >= low && o.blockNumber <= high,
        ],
        [
          // $end_block is declared and not used, as the client library does.
          '$address: Bytes, $first: Int, $skip: Int, $start_block: Int, $end_block: Int',
          '{ and: [ {or: [{sender: $address}, {target: $address}]}, {blockNumber_gte: $start_block}, ] }',
          (o) => o.blockNumber >= low,
        ],
      ];
      for (const [declarations, where, inWindow] of forms) {
        const result = await data(
          `query AddressActivityQuery(${declarations}) { ${head}
            userOps(first: $first, skip: $skip, orderBy: blockTime, orderDirection: desc, where: ${where}) { ${opFields} } }`,
          { address, first: 3, skip: 1, start_block: low, end_block: high },
        );
        expect(result.accounts).to.deep.equal([expectedAccount(d.truth, account)]);
        expect(result.deposits).to.be.an('array');
        expect(result.userOps.map((o: Json) => o.userOpHash)).to.deep.equal(
          activity
            .filter(inWindow)
            .slice(1, 4)
            .map((o) => o.userOpHash),
        );
      }
    });

    it('answers _meta with the indexed head block as the chain has it', async () => {
      const { _meta } = await data('query MetaQuery { _meta { deployment hasIndexingErrors block { hash number parentHash timestamp } } }');
      const head = Math.max(...d.truth.userOps.map((o) => o.blockNumber));
      expect(_meta.block.number).to.be.at.least(head);
      expect(_meta).to.deep.equal({
        deployment: 'opscan/devnet',
        hasIndexingErrors: false,
        block: await chainBlock(d.devnet.rpcUrl, _meta.block.number),
      });
    });
  });

  describe('filters, orders and pages on every entity', () => {
    it('userOps: operators, nested and/or, orderBy with the id tie-break, skip and single op by id', async () => {
      const failed = d.truth.userOps.filter((o) => !o.success);
      const senders = [...new Set(d.truth.userOps.map((o) => o.sender))].slice(0, 3);
      const byCostDesc = (a: TruthUserOp, b: TruthUserOp) =>
        Number(BigInt(b.actualGasCost) - BigInt(a.actualGasCost)) || (b.userOpHash < a.userOpHash ? -1 : 1);
      const mid = d.truth.userOps[150]!.blockNumber;
      const cases: Array<[string, TruthUserOp[]]> = [
        ['orderBy: actualGasCost, orderDirection: desc, where: {success: false}', failed.sort(byCostDesc)],
        [
          `orderBy: blockNumber, orderDirection: desc, where: {sender_in: ${JSON.stringify(senders)}, blockNumber_lt: "${mid}"}`,
          d.truth.userOps.filter((o) => senders.includes(o.sender) && o.blockNumber < mid).sort(newestFirst),
        ],
        [
          `orderBy: blockNumber, orderDirection: desc, where: {or: [{paymaster: "${ZERO_ADDRESS}", success: false}, {and: [{nonce_gt: "0"}, {blockNumber_gte: ${mid}}]}]}`,
          d.truth.userOps
            .filter((o) => (o.paymaster === null && !o.success) || (BigInt(o.nonce) > 0n && o.blockNumber >= mid))
            .sort(newestFirst),
        ],
        [
          // Branches that overlap (an op matching both is answered once), beside another condition.
          `orderBy: blockNumber, orderDirection: desc, where: {success: true, or: [{sender_in: ${JSON.stringify(senders)}}, {sender: "${senders[0]}"}, {blockNumber_lt: "${mid}"}]}`,
          d.truth.userOps.filter((o) => o.success && (senders.includes(o.sender) || o.blockNumber < mid)).sort(newestFirst),
        ],
        [
          `orderBy: blockNumber, orderDirection: desc, where: {paymaster_not: "${ZERO_ADDRESS}", entryPoint_not_in: ["${d.truth.userOps[0]!.entryPoint}"]}`,
          d.truth.userOps.filter((o) => o.paymaster !== null && o.entryPoint !== d.truth.userOps[0]!.entryPoint).sort(newestFirst),
        ],
      ];
      for (const [args, expected] of cases) {
        expect(expected.length, args).to.be.above(3);
        const all = await data(`{ userOps(first: 1000, ${args}) { userOpHash } }`);
        expect(
          all.userOps.map((o: Json) => o.userOpHash),
          args,
        ).to.deep.equal(expected.map((o) => o.userOpHash));
        const page = await data(`{ userOps(first: 2, skip: 2, ${args}) { userOpHash } }`);
        expect(
          page.userOps.map((o: Json) => o.userOpHash),
          args,
        ).to.deep.equal(expected.slice(2, 4).map((o) => o.userOpHash));
      }
      const byId = [...d.truth.userOps].sort((a, b) => (a.userOpHash < b.userOpHash ? -1 : 1));
      const defaultOrder = await data('{ userOps(first: 5) { id } }');
      expect(defaultOrder.userOps.map((o: Json) => o.id)).to.deep.equal(byId.slice(0, 5).map((o) => `${o.userOpHash}-${o.logIndex}`));
      const op = d.truth.userOps[42]!;
      const single = await data(`{ userOp(id: "${op.userOpHash}-${op.logIndex}") { sender } missing: userOp(id: "nope") { sender } }`);
      expect(single).to.deep.equal({ userOp: { sender: op.sender }, missing: null });
      const inIds = await data(`{ userOps(where: {id_in: ["${op.userOpHash}-${op.logIndex}", "0x12-1"]}) { userOpHash } }`);
      expect(inIds.userOps).to.deep.equal([{ userOpHash: op.userOpHash }]);
      const contains = await data(`{ userOps(first: 1000, where: {callData_contains: "${op.callData.slice(0, 10)}"}) { userOpHash } }`);
      expect(contains.userOps.map((o: Json) => o.userOpHash)).to.have.members(
        d.truth.userOps.filter((o) => o.callData.startsWith(op.callData.slice(0, 10))).map((o) => o.userOpHash),
      );
    });

    it('reads an address id by its column as its text compares: id, id_in, id_gt; another case or an odd length names nothing', async () => {
      const accounts = [...new Set(d.truth.userOps.map((o) => o.sender))].sort();
      const [first, second] = [accounts[0]!, accounts[1]!];
      const upper = (hex: string) => `0x${hex.slice(2).toUpperCase()}`;
      const single = await data(
        `{ account(id: "${second}") { id } upper: account(id: "${upper(second)}") { id } odd: account(id: "0xabc") { id } }`,
      );
      expect(single).to.deep.equal({ account: { id: second }, upper: null, odd: null });
      const inIds = await data(`{ accounts(where: {id_in: ["${second}", "${upper(first)}", "nope"]}) { id } }`);
      expect(inIds.accounts).to.deep.equal([{ id: second }]);
      const after = await data(`{ accounts(first: 1000, where: {id_gt: "${first}"}) { id } }`);
      expect(after.accounts.map((a: Json) => a.id)).to.deep.equal(accounts.slice(1));
      // Not of the id's form (odd length): compared as text, as before ids were bytea.
      const bound = second.slice(0, 7);
      const byText = await data(`{ accounts(first: 1000, where: {id_lte: "${bound}"}) { id } }`);
      expect(byText.accounts.map((a: Json) => a.id)).to.deep.equal(accounts.filter((a) => a <= bound));
    });

    it('takes a whole filter as a variable, and leaves out a condition whose variable is unset', async () => {
      // What graphql-js execution defines, and what a JIT executor evaluated here did not keep (it
      // exhausted the heap compiling a variable of the self-nesting filter type, and set an unset
      // variable inside an object literal to null, filtering `sender is null`).
      const sender = d.truth.userOps[5]!.sender;
      const byLiteral = await data(`{ userOps(first: 1000, where: {or: [{sender: "${sender}"}, {target: "${sender}"}]}) { id } }`);
      expect(byLiteral.userOps).to.have.length.above(0);
      const byVariable = await data('query Q($w: UserOp_filter) { userOps(first: 1000, where: $w) { id } }', {
        w: { or: [{ sender }, { target: sender }] },
      });
      expect(byVariable).to.deep.equal(byLiteral);
      const unfiltered = await data('{ userOps(first: 5, orderBy: blockNumber) { id } }');
      const unset = 'query Q($a: Bytes) { userOps(first: 5, orderBy: blockNumber, where: {or: [{sender: $a}, {target: $a}]}) { id } }';
      expect(await data(unset, {})).to.deep.equal(unfiltered);
    });

    it('answers introspection from the published schema, where a filter is an input object, also beside data fields', async () => {
      // Documents run against a twin whose filter arguments are scalars (server/graphql/schema.ts);
      // code generators and explorers introspect, and must see what they validate against.
      const describe = '{ __type(name: "UserOp_filter") { kind inputFields { name } } }';
      const type = (await data(describe)).__type;
      expect(type.kind).to.equal('INPUT_OBJECT');
      expect(type.inputFields.map((f: Json) => f.name)).to.include.members(['sender', 'target_in', 'or', 'and']);
      const op = d.truth.userOps[3]!;
      const mixed = await data(
        `{ __schema { queryType { name } } userOps(where: {sender: "${op.sender}", nonce: "${op.nonce}"}) { userOpHash } }`,
      );
      expect(mixed).to.deep.equal({ __schema: { queryType: { name: 'Query' } }, userOps: [{ userOpHash: op.userOpHash }] });
    });

    it('bundles: order, filter and their ops as a nested list', async () => {
      const multi = d.truth.bundles.filter((b) => b.userOpHashes.length > 1);
      const expected = [...multi].sort(
        (a, b) =>
          b.blockNumber - a.blockNumber ||
          (b.transactionHash < a.transactionHash ? -1 : b.transactionHash > a.transactionHash ? 1 : b.bundleIndex - a.bundleIndex),
      );
      expect(expected.length).to.be.within(20, 1000);
      const result = await data(`{ bundles(first: 1000, orderBy: blockNumber, orderDirection: desc, where: {userOpsLength_gt: "1"}) {
        id transactionHash bundleIndex bundler beneficiary success transactionFee userOpsLength blockTime
        userOps(first: 16, orderBy: logIndex) { userOpHash logIndex } } }`);
      expect(result.bundles.map((b: Json) => b.id)).to.deep.equal(expected.map((b) => `${b.transactionHash}-${b.bundleIndex}`));
      for (const [i, b] of expected.entries()) {
        const got = result.bundles[i];
        expect(got).to.deep.include({
          bundler: b.bundler,
          beneficiary: b.beneficiary,
          success: b.success,
          transactionFee: b.transactionFee,
          userOpsLength: String(b.userOpHashes.length),
          blockTime: String(b.blockTime),
        });
        const ops = d.truth.userOps.filter((o) => b.userOpHashes.includes(o.userOpHash)).sort((x, y) => x.logIndex - y.logIndex);
        expect(got.userOps.map((o: Json) => o.userOpHash)).to.deep.equal(ops.map((o) => o.userOpHash));
      }
      const one = expected[0]!;
      const single = await data(
        `{ bundle(id: "${one.transactionHash}-${one.bundleIndex}") { userOpsLength userOps(first: 1, skip: 1, orderBy: logIndex) { userOpHash } } }`,
      );
      expect(single.bundle.userOpsLength).to.equal(String(one.userOpHashes.length));
      expect(single.bundle.userOps).to.have.length(1);
    });

    it('accounts, factories and their accounts; paymasters, bundlers and their ops; deposits', async () => {
      const factory = d.truth.accounts[0]!.factory;
      const deployed = d.truth.accounts
        .filter((a) => a.factory === factory)
        .sort((a, b) => a.blockNumber - b.blockNumber || (a.address < b.address ? -1 : 1));
      const accounts = await data(
        `{ accounts(first: 1000, orderBy: blockNumber, where: {factory: "${factory}"}) { address userOps(first: 2, orderBy: blockNumber, orderDirection: desc) { sender } } }`,
      );
      expect(accounts.accounts.map((a: Json) => a.address)).to.deep.equal(deployed.map((a) => a.address));
      for (const a of accounts.accounts) {
        expect(a.userOps).to.have.length(Math.min(2, d.truth.userOps.filter((o) => o.sender === a.address).length));
        expect(a.userOps.every((o: Json) => o.sender === a.address)).to.equal(true);
      }

      const factories = await data(
        `{ factories(first: 10, orderBy: accountsCount, orderDirection: desc) { id accountsCount accounts(first: 1000) { factory } } }`,
      );
      const counts = new Map<string, number>();
      for (const a of d.truth.accounts) counts.set(a.factory, (counts.get(a.factory) ?? 0) + 1);
      expect(new Map(factories.factories.map((f: Json) => [f.id, Number(f.accountsCount)]))).to.deep.equal(counts);
      for (const f of factories.factories) expect(f.accounts.map((a: Json) => a.factory)).to.deep.equal(Array(counts.get(f.id)).fill(f.id));

      const paymasters = await data(
        `{ paymasters(orderBy: userOpsCount, orderDirection: desc) { id userOpsCount gasSponsored totalDeposit userOps(first: 3) { paymaster } } }`,
      );
      const sponsored = new Map<string, TruthUserOp[]>();
      for (const o of d.truth.userOps) if (o.paymaster) sponsored.set(o.paymaster, [...(sponsored.get(o.paymaster) ?? []), o]);
      expect(paymasters.paymasters.map((p: Json) => [p.id, p.userOpsCount, p.gasSponsored])).to.have.deep.members(
        [...sponsored].map(([p, ops]) => [p, String(ops.length), sumOf(ops.map((o) => o.actualGasCost))]),
      );
      const countsDesc = paymasters.paymasters.map((p: Json) => Number(p.userOpsCount));
      expect(countsDesc).to.deep.equal([...countsDesc].sort((a, b) => b - a));
      for (const p of paymasters.paymasters) {
        expect(BigInt(p.totalDeposit) > 0n).to.equal(true);
        expect(p.userOps.map((o: Json) => o.paymaster)).to.deep.equal(Array(3).fill(p.id));
      }
      const deposits = await data(`{ deposits(where: {account: "${paymasters.paymasters[0].id}"}) { account totalDeposit } }`);
      expect(deposits.deposits.length).to.be.above(0);

      const bundlers = await data(`{ bundlers(first: 10) { id userOpsCount bundlesCount bundles(first: 1000) { bundler } } }`);
      for (const b of bundlers.bundlers) {
        expect(b.userOpsCount).to.equal(String(d.truth.userOps.filter((o) => o.bundler === b.id).length));
        expect(b.bundlesCount).to.equal(String(d.truth.bundles.filter((x) => x.bundler === b.id).length));
        expect(b.bundles).to.have.length(Number(b.bundlesCount));
      }
      expect(bundlers.bundlers.map((b: Json) => b.id)).to.have.members([...new Set(d.truth.bundles.map((b) => b.bundler))]);
    });

    it('dailyMetrics and globalCounters', async () => {
      const days = [...d.truth.days].sort((a, b) => b.day - a.day);
      const result = await data(`{ dailyMetrics(orderBy: daySinceEpoch, orderDirection: desc) {
        id daySinceEpoch userOpsDaily bundleDaily walletsCreatedDaily gasCostCollectedDaily userOpsTotal bundlesTotal } 
        globalCounters { id userOpCounter bundleCounter walletsCreated } }`);
      let remaining = d.truth.userOps.length;
      let bundlesRemaining = d.truth.bundles.length;
      expect(result.dailyMetrics).to.deep.equal(
        days.map((day) => {
          const row = {
            id: String(day.day),
            daySinceEpoch: String(day.day),
            userOpsDaily: String(day.userOps),
            bundleDaily: String(day.bundles),
            walletsCreatedDaily: String(day.walletsCreated),
            gasCostCollectedDaily: day.gasCostCollected,
            userOpsTotal: String(remaining),
            bundlesTotal: String(bundlesRemaining),
          };
          remaining -= day.userOps;
          bundlesRemaining -= day.bundles;
          return row;
        }),
      );
      expect(result.globalCounters).to.deep.equal([
        {
          id: 'global',
          userOpCounter: String(d.truth.userOps.length),
          bundleCounter: String(d.truth.bundles.length),
          walletsCreated: String(d.truth.accounts.length),
        },
      ]);
      const one = await data(`{ dailyMetric(id: "${days[1]!.day}") { userOpsDaily } }`);
      expect(one.dailyMetric).to.deep.equal({ userOpsDaily: String(days[1]!.userOps) });
    });
  });

  describe('graph-node at the same URL: the query page, queries on GET, time travel', () => {
    const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

    it('serves GraphiQL to a browser at the endpoint, keyless, and its assets from this server', async () => {
      for (const path of ['/subgraphs/name/devnet', `/api/${d.key}/subgraphs/name/devnet`, '/subgraphs/name/Devnet/']) {
        const page = await d.api().get(path).set('accept', HTML);
        expect([page.status, page.type], path).to.deep.equal([200, 'text/html']);
        expect(page.text).to.include('<input id="key"').and.include('src="/subgraphs/query-page/page.js"');
        // Every script and stylesheet the page names is this server's own.
        const assets = [...page.text.matchAll(/(?:src|href)="([^"#]+)"/g)]
          .map((m) => m[1]!)
          .filter((a) => !a.startsWith('/docs') && a !== '/');
        expect(
          assets.filter((a) => !a.startsWith('/subgraphs/query-page/')),
          path,
        ).to.deep.equal([]);
        for (const asset of assets) expect((await d.api().get(asset)).status, asset).to.equal(200);
      }
      const graphiql = await d.api().get('/subgraphs/query-page/vendor/graphiql.js');
      expect(graphiql.type).to.match(/javascript/);
      expect(graphiql.text).to.include('GraphiQL');
      for (const missing of ['/subgraphs/query-page/vendor/__proto__', '/subgraphs/query-page/vendor/..%2Fpackage.json'])
        expect((await d.api().get(missing)).status, missing).to.equal(404);
      const unknown = await d.api().get('/subgraphs/name/atlantis').set('accept', HTML);
      expect([unknown.status, unknown.body.errors[0].message]).to.deep.equal([404, 'No subgraph "atlantis"']);
      // Not a browser, no query: a GraphQL error, as a POST without one.
      const bare = await d.api().get('/subgraphs/name/devnet').set('x-api-key', d.key);
      expect([bare.status, bare.body.errors[0].message]).to.deep.equal([400, 'Missing query']);
    });

    it('GraphiQL in headless Chromium: the key from its field, completion from the schema, the sample query run (screenshot saved)', async function () {
      const server = createApp(d.deps).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        await withChromium(this, { width: 1300, height: 900 }, async (browser) => {
          const page = await browser.newPage();
          const errors: string[] = [];
          page.on('pageerror', (e) => errors.push(e.message));
          const foreign: string[] = [];
          page.on('request', (r) => {
            if (!r.url().startsWith(base)) foreign.push(r.url());
          });
          await page.goto(`${base}/subgraphs/name/devnet`);
          await page.locator('.graphiql-container').waitFor({ timeout: 30_000 });
          await page.fill('#key', d.key);
          // Mounted anew with the key: the sample query, and the newest op's hash in its variables.
          const newest = [...d.truth.userOps].sort(newestFirst)[0]!;
          const variables = page.locator('.graphiql-editor-tool .CodeMirror-code');
          await variables.filter({ hasText: newest.userOpHash }).waitFor({ timeout: 30_000 });
          expect(await page.locator('.graphiql-query-editor .CodeMirror-code').textContent()).to.include('query GetUserOpHash');
          await page.click('.graphiql-execute-button');
          const result = page.locator('.result-window .CodeMirror-code');
          await result.filter({ hasText: 'transactionHash' }).waitFor({ timeout: 30_000 });
          const answer = (await result.textContent())!;
          expect(answer).to.include(newest.userOpHash).and.include(newest.transactionHash);
          // Completion from the introspected schema.
          await page.click('.graphiql-query-editor .CodeMirror-scroll');
          await page.keyboard.press('Control+A');
          await page.keyboard.press('Delete');
          await page.keyboard.type('{ userO', { delay: 30 });
          const hints = page.locator('.CodeMirror-hints .CodeMirror-hint');
          await hints.first().waitFor({ timeout: 30_000 });
          const offered = await hints.allTextContents();
          expect(offered).to.include.members(['userOps', 'userOp']);
          await page.screenshot({ path: join(tmpdir(), 'opscan-graphql-page.png'), fullPage: true });
          expect(errors).to.deep.equal([]);
          expect(foreign).to.deep.equal([]);
        });
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('answers `query=` (with `variables=` and `operationName=`) on GET as on POST, under the same key and limits', async () => {
      const op = d.truth.userOps[5]!;
      const query = 'query A($h: Bytes) { userOps(where: {userOpHash: $h}) { userOpHash sender } } query B { _meta { deployment } }';
      const variables = { h: op.userOpHash };
      const posted = await d.api().post('/subgraphs/name/devnet').set('x-api-key', d.key).send({ query, variables, operationName: 'A' });
      const got = await d
        .api()
        .get('/subgraphs/name/devnet')
        .query({ query, variables: JSON.stringify(variables), operationName: 'A' })
        .set('x-api-key', d.key)
        .set('accept', HTML);
      expect(got.status).to.equal(200);
      expect(got.type).to.equal('application/json');
      expect(got.body).to.deep.equal(posted.body);
      expect(got.body.data.userOps).to.deep.equal([{ userOpHash: op.userOpHash, sender: op.sender }]);
      const inPath = await d.api().get(`/api/${d.key}/subgraphs/name/devnet`).query({ query, operationName: 'B' });
      expect(inPath.body).to.deep.equal({ data: { _meta: { deployment: 'opscan/devnet' } } });
      const noKey = await d.api().get('/subgraphs/name/devnet').query({ query: '{ _meta { deployment } }' });
      expect([noKey.status, noKey.body.errors[0].extensions.code]).to.deep.equal([401, 'UNAUTHORIZED']);
      const tooMany = await d
        .api()
        .get('/subgraphs/name/devnet')
        .query({ query: '{ userOps(first: 1000) { bundle { userOps(first: 1000) { id } } } }' })
        .set('x-api-key', d.key);
      expect(tooMany.body.errors[0].message).to.match(/more than 20000 rows/);
    });

    it('answers GraphQL refusals with HTTP 200 and JSON whatever the client accepts, as graph-node does', async () => {
      const deep = `{ userOps(first: 1) { ${'bundle { userOps(first: 1) { '.repeat(10)} id ${'} } '.repeat(10)} } }`;
      const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: _meta { deployment }`).join(' ')} }`;
      for (const [query, message] of [
        [deep, /nests fields \d+ deep/],
        [aliases, /uses 40 aliases; at most 30/],
        ['{ userOps { id }', /Syntax Error/],
        ['{ userOps { nope } }', /Cannot query field "nope"/],
      ] as const) {
        // graphql-request's Accept: the GraphQL-over-HTTP media type first.
        const res = await d
          .api()
          .post('/subgraphs/name/devnet')
          .set('x-api-key', d.key)
          .set('accept', 'application/graphql-response+json, application/json')
          .send({ query });
        expect([res.status, res.type], query.slice(0, 40)).to.deep.equal([200, 'application/json']);
        expect(res.body.errors[0].message).to.match(message);
      }
    });

    /** A block with ops both at or below it and above it, its ops, and the head the indexer reached. */
    async function blockInTheMiddle() {
      const numbers = [...new Set(d.truth.userOps.map((o) => o.blockNumber))].sort((a, b) => a - b);
      const middle = numbers[Math.floor(numbers.length / 2)]!;
      const { _meta } = await data('{ _meta { block { number } } }');
      return { middle, head: _meta.block.number as number };
    }
    const hashesOf = (rows: Json[]) => rows.map((r) => r.userOpHash as string).sort();

    it('block: {number} answers ops, bundles and deposits as of that block, on collections, single entities and nested lists', async () => {
      const { middle } = await blockInTheMiddle();
      const before = d.truth.userOps.filter((o) => o.blockNumber <= middle);
      const after = d.truth.userOps.filter((o) => o.blockNumber > middle);
      expect(before.length).to.be.above(10);
      expect(after.length).to.be.above(10);

      const ops = await data(`{ userOps(first: 1000, block: {number: ${middle}}) { userOpHash blockNumber } }`);
      expect(hashesOf(ops.userOps)).to.deep.equal(before.map((o) => o.userOpHash).sort());
      const latest = await data('{ userOps(first: 1000) { userOpHash } }');
      expect(latest.userOps).to.have.length(d.truth.userOps.length);

      const bundles = await data(
        `{ bundles(first: 500, block: {number: ${middle}}) { transactionHash bundleIndex blockNumber userOps(first: 20) { blockNumber } } }`,
      );
      const bundlesBefore = d.truth.bundles.filter((b) => b.blockNumber <= middle);
      expect(bundles.bundles.map((b: Json) => `${b.transactionHash}-${b.bundleIndex}`).sort()).to.deep.equal(
        bundlesBefore.map((b) => `${b.transactionHash}-${b.bundleIndex}`).sort(),
      );
      expect(
        bundles.bundles.every((b: Json) => b.userOps.length > 0 && b.userOps.every((o: Json) => Number(o.blockNumber) <= middle)),
      ).to.equal(true);

      // A single op before and after the block; `first`/`where` and the union of a top-level `or` as of the block.
      const [early, late] = [before[0]!, after[after.length - 1]!];
      const single = await data(
        `{ early: userOp(id: "${early.userOpHash}-${early.logIndex}", block: {number: ${middle}}) { userOpHash }
           late: userOp(id: "${late.userOpHash}-${late.logIndex}", block: {number: ${middle}}) { userOpHash }
           lateNow: userOp(id: "${late.userOpHash}-${late.logIndex}") { userOpHash } }`,
      );
      expect(single).to.deep.equal({ early: { userOpHash: early.userOpHash }, late: null, lateNow: { userOpHash: late.userOpHash } });
      const sender = late.sender;
      const activity = await data(
        `query Q($a: Bytes) { userOps(first: 1000, block: {number: ${middle}}, where: {or: [{sender: $a}, {target: $a}]}) { userOpHash } }`,
        { a: sender },
      );
      const expected = before.filter((o) => o.sender === sender || firstTarget(o) === sender).map((o) => o.userOpHash);
      expect(hashesOf(activity.userOps)).to.deep.equal(expected.sort());
      expect(expected.length).to.be.below(d.truth.userOps.filter((o) => o.sender === sender || firstTarget(o) === sender).length);

      const deposits = await data(
        `{ all: deposits(first: 1000) { blockNumber } then: deposits(first: 1000, block: {number: ${middle}}) { blockNumber } }`,
      );
      expect(deposits.then).to.deep.equal(deposits.all.filter((x: Json) => Number(x.blockNumber) <= middle));
    });

    it('block: {hash} reads at the block of a stored header, and _meta(block:) answers the block asked', async () => {
      const { middle, head } = await blockInTheMiddle();
      // A header as the indexer stores it at a batch's edge: the chain's own.
      const header = await chainBlock(d.devnet.rpcUrl, middle);
      await blocks.upsertMany(d.db, d.truth.chainId, [header]);
      const byHash = await data(
        `{ userOps(first: 1000, block: {hash: "${header.hash.toUpperCase().replace('0X', '0x')}"}) { userOpHash } }`,
      );
      expect(hashesOf(byHash.userOps)).to.deep.equal(
        d.truth.userOps
          .filter((o) => o.blockNumber <= middle)
          .map((o) => o.userOpHash)
          .sort(),
      );
      const meta = await data(`{ byHash: _meta(block: {hash: "${header.hash}"}) { block { number hash parentHash timestamp } }
        byNumber: _meta(block: {number: ${middle}}) { deployment hasIndexingErrors block { number hash parentHash timestamp } }
        atLeast: _meta(block: {number_gte: ${middle}}) { block { number hash } } }`);
      expect(meta.byHash.block).to.deep.equal(header);
      // As graph-node: a block asked by number is answered without its header.
      expect(meta.byNumber).to.deep.equal({
        deployment: 'opscan/devnet',
        hasIndexingErrors: false,
        block: { number: middle, hash: null, parentHash: null, timestamp: null },
      });
      expect(meta.atLeast.block).to.deep.equal({ number: head, hash: (await chainBlock(d.devnet.rpcUrl, head)).hash });
    });

    it("refuses a block past the indexed head, an unknown hash and an unmet number_gte with graph-node's messages", async () => {
      const { head } = await blockInTheMiddle();
      const notYet = (argument: string, asked: number) =>
        `Failed to decode \`${argument}\` value: \`subgraph opscan/devnet has only indexed up to block number ${head} and data for block number ${asked} is therefore not yet available\``;
      expect(await refused(`{ userOps(block: {number: ${head + 1}}) { id } }`)).to.equal(notYet('block.number', head + 1));
      expect(await refused(`{ userOp(id: "x", block: {number: ${head + 50}}) { id } }`)).to.equal(notYet('block.number', head + 50));
      expect(await refused(`{ bundles(block: {number_gte: ${head + 1}}) { id } }`)).to.equal(notYet('block.number_gte', head + 1));
      expect(await refused(`{ _meta(block: {number: ${head + 1}}) { deployment } }`)).to.equal(notYet('block.number', head + 1));
      expect(await refused(`{ userOps(block: {hash: "0x${'ab'.repeat(32)}"}) { id } }`)).to.equal(
        'Failed to decode `block.hash` value: `no block with that hash found`',
      );
      expect(await refused('{ userOps(block: {}) { id } }')).to.match(/one of `hash`, `number` or `number_gte`/);
      // Met: answered at the head.
      const met = await data(`{ userOps(first: 1000, block: {number_gte: ${head}}) { id } }`);
      expect(met.userOps).to.have.length(d.truth.userOps.length);
    });

    it('answers entities of running totals at the head only, and refuses them at an earlier block naming the entity', async () => {
      const { middle, head } = await blockInTheMiddle();
      const account = d.truth.accounts[0]!.address;
      const now = await data(`{ accounts(where: {address: "${account}"}) { id userOpsCount } }`);
      for (const block of [`{number: ${head}}`, '{number_gte: 1}']) {
        const atHead = await data(`{ accounts(where: {address: "${account}"}, block: ${block}) { id userOpsCount } }`);
        expect(atHead).to.deep.equal(now);
      }
      for (const [field, entity] of [
        ['accounts', 'Account'],
        ['paymasters', 'Paymaster'],
        ['factories', 'Factory'],
        ['bundlers', 'Bundler'],
        ['dailyMetrics', 'DailyMetric'],
        ['globalCounters', 'GlobalCounter'],
      ]) {
        const message = await refused(`{ ${field}(block: {number: ${middle}}) { id } }`);
        expect(message).to.match(new RegExp(`^${entity} cannot be answered at block ${middle}: it holds running totals`));
        expect(message).to.include('supported for immutable entities only');
      }
      expect(await refused(`{ account(id: "${account}", block: {number: ${middle}}) { id } }`)).to.match(/^Account cannot be answered/);
      // Nested in an op as of an earlier block: the op answers, its account is refused at its path.
      const nested = await gql(`{ userOps(first: 1, block: {number: ${middle}}) { userOpHash accountSender { userOpsCount } } }`);
      expect(nested.errors![0]!.message).to.match(/^Account cannot be answered at block/);
      expect(nested.errors![0]!.path).to.deep.equal(['userOps', 0, 'accountSender']);
      expect(nested.data!.userOps[0].accountSender).to.equal(null);
    });
  });

  describe('bounded execution', () => {
    /** An app over a database that counts the statements it runs. */
    function countingApp(): { app: ReturnType<typeof createApp>; statements: () => number } {
      let count = 0;
      const db: Db = new Proxy(d.db, {
        get(target, prop, receiver) {
          if (prop === 'query') {
            return (text: string, values?: readonly unknown[]) => {
              count++;
              return target.query(text, values);
            };
          }
          return Reflect.get(target, prop, receiver);
        },
      });
      return { app: createApp({ ...d.deps, db }), statements: () => count };
    }

    const NESTED =
      '{ bundles(first: 50) { id userOps(first: 16) { accountSender { factory userOps(first: 2) { id } } erc20Transfers(first: 5) { value } bundle { id } } } }';

    it('loads nested lists with one statement per level, whatever the number of parents', async () => {
      const { app, statements } = countingApp();
      const res = await request(app).post('/subgraphs/name/devnet').set('x-api-key', d.key).send({ query: NESTED });
      expect(res.body.errors).to.equal(undefined);
      expect(res.body.data.bundles.length).to.be.above(20);
      const before = statements();
      await request(app).post('/subgraphs/name/devnet').set('x-api-key', d.key).send({ query: NESTED });
      // bundles, their userOps, those ops' accountSender, bundle and erc20Transfers, the accounts' userOps.
      expect(statements() - before).to.equal(6);
    });

    it('tolerates undeclared $first/$skip (defaults) and Int variables in BigInt filters, as graph-node does', async () => {
      const result = await data('query Q($b: Int) { userOps(first: $first, skip: $skip, where: {blockNumber_gte: $b}) { id } }', { b: 0 });
      expect(result.userOps).to.have.length(100);
    });

    it('refuses malformed and abusive queries with GraphQL errors, and keeps answering', async () => {
      const hash = d.truth.userOps[0]!.userOpHash;
      expect(await refused('{ userOps { id }')).to.match(/Syntax Error/);
      expect(await refused('{ userOps { nope } }')).to.match(/Cannot query field "nope"/);
      expect(await refused('{ userOps(first: 100000) { id } }')).to.match(/`first` argument must be between 0 and 1000/);
      expect(await refused('{ userOps(skip: 100000) { id } }')).to.match(/`skip` argument must be between 0 and 5000/);
      expect(await refused('{ accountModules(address: "0x1234") { address } }')).to.match(/`address` argument must be a 20-byte address/);
      expect(await refused('{ accountModules(address: "nope") { address } }')).to.match(/Bytes takes 0x-prefixed hex/);
      expect(await refused('{ accountModules { address } }')).to.match(/argument "address" of type "Bytes!" is required/);
      expect(await refused('{ modules(first: 100000) { module } }')).to.match(/`first` argument must be between 0 and 1000/);
      const deep = `{ userOps(first: 1) { ${'bundle { userOps(first: 1) { '.repeat(10)} id ${'} } '.repeat(10)} } }`;
      expect(await refused(deep)).to.match(/nests fields \d+ deep/);
      const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: _meta { deployment }`).join(' ')} }`;
      expect(await refused(aliases(1000))).to.match(/Document contains more th.. 4000 tokens/);
      expect(await refused(aliases(40))).to.match(/uses 40 aliases; at most 30/);
      const huge = (n: number, value: string) =>
        `{ userOps(where: {userOpHash_in: ${JSON.stringify(Array.from({ length: n }, () => value))}}) { id } }`;
      expect(await refused(huge(1000, '0x01'))).to.match(/at most 500 values, got 1000/);
      const tooLarge = await d
        .api()
        .post('/subgraphs/name/devnet')
        .set('x-api-key', d.key)
        .send({ query: huge(1000, hash) });
      expect(tooLarge.status).to.equal(413);
      expect(tooLarge.body.errors[0].message).to.match(/larger than 64 KB|too large/);
      expect(await refused('query Q($first: Int) { userOps(first: $first) { id } }', { first: 'abc' })).to.match(/Variable "\$first"/);
      expect(await refused('query Q($h: Bytes) { userOps(where: {userOpHash: $h}) { id } }', { h: 123 })).to.equal(
        'Variable "$h" got invalid value 123; Bytes takes 0x-prefixed hex of whole bytes, got 123',
      );
      expect(await refused('query Q($h: String) { userOps(where: {userOpHash: $h}) { id } }', { h: 'not hex' })).to.match(/Bytes/);
      expect(await refused('query Q($f: String) { userOps(first: $f) { id } }', { f: '1' })).to.match(/Variable "\$f" of type "String"/);
      expect(await refused('{ userOps(where: {blockNumber_gt: "1e99"}) { id } }')).to.match(/BigInt/);
      expect(await refused('{ userOps(first: 1000) { bundle { userOps(first: 1000) { id } } } }')).to.match(/more than 20000 rows/);
      const nestedFilter = `{ userOps(where: ${'{and: ['.repeat(20)}{success: true}${']}'.repeat(20)}) { id } }`;
      expect(await refused(nestedFilter)).to.match(/at most 8 levels/);
      expect(await refused('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }')).to.match(/Cannot spread fragment/);
      const bomb = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ');
      expect(await refused(`{ ...F0 } ${bomb} fragment F30 on Query { _meta { deployment } }`)).to.match(/selections/);
      expect(await refused(`{ ${'userOps { id } '.repeat(2000)} }`)).to.match(/Document contains more th.. 4000 tokens/);

      const malformed = await d
        .api()
        .post('/subgraphs/name/devnet')
        .set('x-api-key', d.key)
        .set('content-type', 'application/json')
        .send('{"query": ');
      expect(malformed.status).to.equal(400);
      expect(malformed.body.errors[0].message).to.match(/Invalid request body/);
      const noQuery = await d.api().post('/subgraphs/name/devnet').set('x-api-key', d.key).send({ variables: {} });
      expect([noQuery.status, noQuery.body.errors[0].message]).to.deep.equal([400, 'Missing query']);
      const health = await d.api().get('/healthz');
      expect(health.status).to.equal(200);
    });

    it('answers a failing statement as an internal error at its field, with its locations and never its message', async () => {
      const db: Db = new Proxy(d.db, {
        get(target, prop, receiver) {
          if (prop !== 'query') return Reflect.get(target, prop, receiver);
          return (text: string, values?: readonly unknown[]) =>
            /from user_ops t/.test(text) ? Promise.reject(new Error('secret detail')) : target.query(text, values);
        },
      });
      const res = await request(createApp({ ...d.deps, db }))
        .post('/subgraphs/name/devnet')
        .set('x-api-key', d.key)
        .send({ query: '{ _meta { deployment }\n  userOps(first: 1) { id } }' });
      expect(res.status).to.equal(200);
      expect(res.text).to.not.include('secret detail');
      expect(res.body).to.deep.equal({
        errors: [{ message: 'Internal error', locations: [{ line: 2, column: 3 }], path: ['userOps'] }],
        data: null,
      });
    });

    it('answers keys, networks and rate limits as GraphQL errors, and takes the key in the path', async () => {
      const query = '{ _meta { deployment } }';
      const noKey = await d.api().post('/subgraphs/name/devnet').send({ query });
      expect([noKey.status, noKey.body.errors[0].extensions.code]).to.deep.equal([401, 'UNAUTHORIZED']);
      const badKey = await d.api().post('/api/ops_nope/subgraphs/name/devnet').send({ query });
      expect([badKey.status, badKey.body.errors[0].message]).to.deep.equal([403, 'Invalid API Key']);
      const unknown = await d.api().post('/subgraphs/name/atlantis').set('x-api-key', d.key).send({ query });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.errors[0].message).to.match(/served networks: devnet/);
      const inPath = await d.api().post(`/api/${d.key}/subgraphs/name/devnet`).send({ query });
      expect(inPath.body).to.deep.equal({ data: { _meta: { deployment: 'opscan/devnet' } } });

      const slowKey = await createTestKey(d.db, 'graphql-slow', 1);
      const statuses: number[] = [];
      let limited: request.Response | undefined;
      for (let i = 0; i < 6; i++) {
        const res = await d.api().post(`/api/${slowKey}/subgraphs/name/devnet`).send({ query });
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
      expect(statuses).to.include(200);
      expect(limited, statuses.join(',')).to.not.equal(undefined);
      expect(Number(limited!.headers['retry-after'])).to.be.at.least(1);
      expect(limited!.body.errors[0].extensions.code).to.equal('TOO_MANY_REQUESTS');
    });

    it('publishes the schema', async () => {
      const res = await d.api().get('/subgraphs/name/devnet/schema.graphql');
      expect(res.status).to.equal(200);
      expect(res.text)
        .to.include('type UserOp')
        .and.include('input UserOp_filter')
        .and.include('_meta(block: Block_height): _Meta_')
        .and.include('input Block_height');
      expect(res.text).to.match(/userOps\(\s*first: Int = 100/);
      expect((await d.api().get('/subgraphs/name/atlantis/schema.graphql')).status).to.equal(404);
    });
  });
});
