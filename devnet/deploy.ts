/**
 * Deploys everything the traffic needs, in one block, from the deployer EOA.
 *
 * EntryPoints go to their canonical addresses the way they were deployed on public chains:
 * through the deterministic CREATE2 deployer (present on anvil) with the canonical salt. The npm
 * artifacts' init code hashes to the canonical address with these salts, so each EntryPoint's
 * constructor runs there and its immutable SenderCreator (whose v0.8 version only accepts calls
 * from that EntryPoint) is the real one; no code patching needed.
 */
import { Interface, getCreateAddress, concat, ContractFactory, parseEther } from 'ethers';
import { entryPointArtifact, entryPointPackageArtifact, fixtureArtifact, type Artifact } from './artifacts.js';
import { mineBlock, withManualMining, sendRawTransactions } from './mining.js';
import type { Rpc } from './rpc.js';
import type { LocalSigner } from './signer.js';
import { EP_VERSIONS, encodeHandleOps, entryPointInterface, toStruct, userOpHash, type EpVersion, type UserOp } from './userop.js';
import { CANONICAL_ENTRYPOINTS } from '../shared/chain/constants.js';

export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c';

/** Salts of the canonical deployments (checked: artifact init code + salt → canonical address). */
const CANONICAL_SALTS: Record<EpVersion, string> = {
  'v0.6': '0x0000000000000000000000000000000000000000000000000000000000000000',
  'v0.7': '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3',
  'v0.8': '0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9',
};

/** What each paymaster has deposited at its EntryPoint to sponsor ops with. */
export const PAYMASTER_DEPOSIT = parseEther('1000');

export type PerVersion = Record<EpVersion, string>;

/** The canonical addresses of the three versions the devnet runs (shared/networks.ts also lists v0.9). */
export function canonicalEntryPoints(): PerVersion {
  return { 'v0.6': CANONICAL_ENTRYPOINTS['v0.6'], 'v0.7': CANONICAL_ENTRYPOINTS['v0.7'], 'v0.8': CANONICAL_ENTRYPOINTS['v0.8'] };
}

export type Deployment = {
  entryPoints: PerVersion;
  simpleAccountFactories: PerVersion;
  /** Our second factory family: deploys MiniAccount (no proxy, raw-hash signatures). */
  miniAccountFactories: PerVersion;
  /** Sponsors every op, empty context (no postOp). */
  sponsorPaymasters: PerVersion;
  /** Sponsors every op with a non-empty context, so the EntryPoint calls postOp. */
  postOpPaymasters: PerVersion;
  erc20Usd6: string;
  erc20Dai18: string;
  erc721: string;
  erc1155: string;
  reverter: string;
  bundleMulticall: string;
};

/** Flat name → address map, as GroundTruth.contracts carries it. */
export function contractNames(d: Deployment): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of EP_VERSIONS) {
    out[`simpleAccountFactory.${v}`] = d.simpleAccountFactories[v];
    out[`miniAccountFactory.${v}`] = d.miniAccountFactories[v];
    out[`sponsorPaymaster.${v}`] = d.sponsorPaymasters[v];
    out[`postOpPaymaster.${v}`] = d.postOpPaymasters[v];
  }
  Object.assign(out, {
    'erc20.usd6': d.erc20Usd6,
    'erc20.dai18': d.erc20Dai18,
    erc721: d.erc721,
    erc1155: d.erc1155,
    reverter: d.reverter,
    bundleMulticall: d.bundleMulticall,
  });
  return out;
}

type Ctx = { rpc: Rpc; chainId: number; deployer: LocalSigner };

export async function deployContracts(ctx: Ctx): Promise<Deployment> {
  const { rpc, deployer } = ctx;
  await deployer.syncNonce(rpc);
  const raws: string[] = [];
  const create = async (artifact: Artifact, args: unknown[], gasLimit = 8_000_000n): Promise<string> => {
    const address = getCreateAddress({ from: deployer.address, nonce: deployer.nextNonce }).toLowerCase();
    const data = (await new ContractFactory(artifact.abi, artifact.bytecode).getDeployTransaction(...args)).data;
    raws.push(await deployer.sign({ data, gasLimit }));
    return address;
  };
  const deposit = async (version: EpVersion, paymaster: string): Promise<void> => {
    const data = new Interface(entryPointArtifact(version).abi).encodeFunctionData('depositTo', [paymaster]);
    raws.push(await deployer.sign({ to: entryPoints[version], data, value: PAYMASTER_DEPOSIT, gasLimit: 300_000n }));
  };

  const entryPoints = canonicalEntryPoints();
  for (const v of EP_VERSIONS) {
    const code = await rpc.call<string>('eth_getCode', [entryPoints[v], 'latest']);
    if (code !== '0x') continue; // already there (e.g. a forked chain)
    const data = concat([CANONICAL_SALTS[v], entryPointArtifact(v).bytecode]);
    raws.push(await deployer.sign({ to: CREATE2_DEPLOYER, data, gasLimit: 15_000_000n }));
  }

  const perVersion = async (make: (v: EpVersion) => Promise<string>): Promise<PerVersion> => {
    const out = {} as PerVersion;
    for (const v of EP_VERSIONS) out[v] = await make(v);
    return out;
  };
  const family = (v: EpVersion): 'V06' | 'V07' => (v === 'v0.6' ? 'V06' : 'V07');
  const simpleAccountFactories = await perVersion((v) =>
    create(entryPointPackageArtifact(v, 'SimpleAccountFactory'), [entryPoints[v]], 10_000_000n),
  );
  const miniAccountFactories = await perVersion((v) => create(fixtureArtifact(`MiniAccountFactory${family(v)}`), [entryPoints[v]]));
  const sponsorPaymasters = await perVersion((v) => create(fixtureArtifact(`SponsorPaymaster${family(v)}`), [entryPoints[v], false]));
  const postOpPaymasters = await perVersion((v) => create(fixtureArtifact(`SponsorPaymaster${family(v)}`), [entryPoints[v], true]));
  for (const v of EP_VERSIONS) {
    for (const pm of [sponsorPaymasters[v], postOpPaymasters[v]]) {
      await deposit(v, pm);
    }
  }
  const deployment: Deployment = {
    entryPoints,
    simpleAccountFactories,
    miniAccountFactories,
    sponsorPaymasters,
    postOpPaymasters,
    erc20Usd6: await create(fixtureArtifact('TestERC20'), ['Devnet USD', 'dUSD', 6]),
    erc20Dai18: await create(fixtureArtifact('TestERC20'), ['Devnet DAI', 'dDAI', 18]),
    erc721: await create(fixtureArtifact('TestERC721'), []),
    erc1155: await create(fixtureArtifact('TestERC1155'), []),
    reverter: await create(fixtureArtifact('Reverter'), []),
    bundleMulticall: await create(fixtureArtifact('BundleMulticall'), []),
  };

  await withManualMining(rpc, async () => {
    const hashes = await sendRawTransactions(rpc, raws);
    const head = await rpc.call<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
    const block = await mineBlock(rpc, Number(head.timestamp) + 1, hashes);
    const failed = block.receipts.filter((r) => r.status !== '0x1');
    if (failed.length > 0) throw new Error(`deployment transaction(s) failed: ${failed.map((r) => r.transactionHash).join(', ')}`);
  });
  await verifyDeployment(ctx, deployment);
  return deployment;
}

/**
 * Checks every address has code, and that each EntryPoint answers getUserOpHash with the hash we
 * compute ourselves (the hashing the whole ground truth relies on) and holds the paymaster deposits.
 */
async function verifyDeployment(ctx: Ctx, d: Deployment): Promise<void> {
  const { rpc, chainId } = ctx;
  const addresses = Object.entries({
    ...contractNames(d),
    ...Object.fromEntries(EP_VERSIONS.map((v) => [`entryPoint.${v}`, d.entryPoints[v]])),
  });
  const codes = await rpc.batch<string>(addresses.map(([, a]) => ['eth_getCode', [a, 'latest']]));
  addresses.forEach(([name, a], i) => {
    if (codes[i] === '0x') throw new Error(`no code at ${name} ${a}`);
  });
  const sample: UserOp = {
    sender: '0x00000000000000000000000000000000000000aa',
    nonce: (7n << 64n) | 3n,
    initCode: '0x1234',
    callData: '0xabcdef',
    callGasLimit: 100_000n,
    verificationGasLimit: 200_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: '0x',
    signature: '0x',
  };
  for (const v of EP_VERSIONS) {
    const ep = entryPointInterface(v);
    const [hash, deposit] = await rpc.batch<string>([
      ['eth_call', [{ to: d.entryPoints[v], data: ep.encodeFunctionData('getUserOpHash', [toStruct(sample, v)]) }, 'latest']],
      ['eth_call', [{ to: d.entryPoints[v], data: ep.encodeFunctionData('balanceOf', [d.sponsorPaymasters[v]]) }, 'latest']],
    ]);
    const expected = userOpHash(sample, v, d.entryPoints[v], chainId);
    if (hash !== expected) throw new Error(`EntryPoint ${v} getUserOpHash ${hash} differs from the local hash ${expected}`);
    if (BigInt(deposit ?? 0) < PAYMASTER_DEPOSIT) throw new Error(`EntryPoint ${v}: paymaster deposit missing`);
  }
  // handleOps encoding must round-trip through the EntryPoint ABI (catches struct drift early).
  for (const v of EP_VERSIONS) entryPointInterface(v).decodeFunctionData('handleOps', encodeHandleOps(v, [sample], CREATE2_DEPLOYER));
}
