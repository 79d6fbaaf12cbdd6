/**
 * The chain constants opscan reads by, in one place: the zero address, the canonical EntryPoint
 * deployment of each version (the same address on every chain), and the topics of the events it
 * reads from logs, the EntryPoint's and the token standards'. The indexer, the server, the webhook
 * dispatcher, the devnet, the simulated chain and the benchmarks all import them from here.
 */
import { id } from 'ethers';
import type { EntryPointVersion } from '../networks.js';

/**
 * The zero address: what the EntryPoint's events name for an op without a paymaster, and the spec's
 * "none" for an address field that is not nullable.
 */
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** Canonical EntryPoint deployments (same address on every chain: deterministic deploy). */
export const CANONICAL_ENTRYPOINTS: Readonly<Record<EntryPointVersion, string>> = {
  'v0.6': '0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789',
  'v0.7': '0x0000000071727de22e5e9d8baf0edac6f37da032',
  'v0.8': '0x4337084d9e255ff0702461cf8895ce9e3b5ff108',
  'v0.9': '0x433709009b8330fda32311df1c2afa402ed8d009',
};

/**
 * Topics (keccak-256 of the signature) of the events opscan reads. The EntryPoint's are the same in
 * every version, so a log's version comes from its address, never its topic; test/indexer/decode/
 * abi.test.ts checks them against the published EntryPoint artifacts.
 */
export const TOPICS = {
  userOperationEvent: id('UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)'),
  accountDeployed: id('AccountDeployed(bytes32,address,address,address)'),
  userOperationRevertReason: id('UserOperationRevertReason(bytes32,address,uint256,bytes)'),
  postOpRevertReason: id('PostOpRevertReason(bytes32,address,uint256,bytes)'),
  userOperationPrefundTooLow: id('UserOperationPrefundTooLow(bytes32,address,uint256)'),
  beforeExecution: id('BeforeExecution()'),
  /** v0.9: the op's 7702 initCode initialised its sender's delegated code. */
  eip7702AccountInitialized: id('EIP7702AccountInitialized(bytes32,address,address)'),
  signatureAggregatorChanged: id('SignatureAggregatorChanged(address)'),
  deposited: id('Deposited(address,uint256)'),
  withdrawn: id('Withdrawn(address,address,uint256)'),
  stakeLocked: id('StakeLocked(address,uint256,uint256)'),
  stakeUnlocked: id('StakeUnlocked(address,uint256)'),
  stakeWithdrawn: id('StakeWithdrawn(address,address,uint256)'),
  // Tokens: ERC-20 and ERC-721 share Transfer (ERC-721 indexes the token id: 4 topics).
  transfer: id('Transfer(address,address,uint256)'),
  transferSingle: id('TransferSingle(address,address,address,uint256,uint256)'),
  transferBatch: id('TransferBatch(address,address,address,uint256[],uint256[])'),
  // ERC-7579 accounts: a module installed or uninstalled (both arguments unindexed in the standard).
  moduleInstalled: id('ModuleInstalled(uint256,address)'),
  moduleUninstalled: id('ModuleUninstalled(uint256,address)'),
} as const;
