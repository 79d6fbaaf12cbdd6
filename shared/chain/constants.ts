/**
 * The chain constants opscan reads by, in one place: the zero address, the canonical EntryPoint
 * deployment of each version (the same address on every chain), and the topics of the events it
 * reads from logs, the EntryPoint's and the token standards'. The indexer, the server, the webhook
 * dispatcher, the devnet, the simulated chain and the benchmarks all import them from here.
 */
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
 * Topics (keccak-256 of the signature above each) of the events opscan reads. The EntryPoint's are
 * the same in every version, so a log's version comes from its address, never its topic. They are
 * written out rather than hashed here: every process reads this module, and hashing would load
 * ethers (about 20 MB of memory) into processes that use nothing else of it, the indexer's
 * supervising thread and the webhook dispatcher. test/indexer/decode/abi.test.ts hashes each
 * signature and checks the EntryPoint's against its published artifacts.
 */
export const TOPICS = {
  // UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)
  userOperationEvent: '0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f',
  // AccountDeployed(bytes32,address,address,address)
  accountDeployed: '0xd51a9c61267aa6196961883ecf5ff2da6619c37dac0fa92122513fb32c032d2d',
  // UserOperationRevertReason(bytes32,address,uint256,bytes)
  userOperationRevertReason: '0x1c4fada7374c0a9ee8841fc38afe82932dc0f8e69012e927f061a8bae611a201',
  // PostOpRevertReason(bytes32,address,uint256,bytes)
  postOpRevertReason: '0xf62676f440ff169a3a9afdbf812e89e7f95975ee8e5c31214ffdef631c5f4792',
  // UserOperationPrefundTooLow(bytes32,address,uint256)
  userOperationPrefundTooLow: '0x67b4fa9642f42120bf031f3051d1824b0fe25627945b27b8a6a65d5761d5482e',
  // BeforeExecution()
  beforeExecution: '0xbb47ee3e183a558b1a2ff0874b079f3fc5478b7454eacf2bfc5af2ff5878f972',
  /** v0.9: the op's 7702 initCode initialised its sender's delegated code. */
  // EIP7702AccountInitialized(bytes32,address,address)
  eip7702AccountInitialized: '0x7c9f9ade6a03a0bba484e52df872467a270e798ffc1adab9dfaa8d0e627f0544',
  // SignatureAggregatorChanged(address)
  signatureAggregatorChanged: '0x575ff3acadd5ab348fe1855e217e0f3678f8d767d7494c9f9fefbee2e17cca4d',
  // Deposited(address,uint256)
  deposited: '0x2da466a7b24304f47e87fa2e1e5a81b9831ce54fec19055ce277ca2f39ba42c4',
  // Withdrawn(address,address,uint256)
  withdrawn: '0xd1c19fbcd4551a5edfb66d43d2e337c04837afda3482b42bdf569a8fccdae5fb',
  // StakeLocked(address,uint256,uint256)
  stakeLocked: '0xa5ae833d0bb1dcd632d98a8b70973e8516812898e19bf27b70071ebc8dc52c01',
  // StakeUnlocked(address,uint256)
  stakeUnlocked: '0xfa9b3c14cc825c412c9ed81b3ba365a5b459439403f18829e572ed53a4180f0a',
  // StakeWithdrawn(address,address,uint256)
  stakeWithdrawn: '0xb7c918e0e249f999e965cafeb6c664271b3f4317d296461500e71da39f0cbda3',
  // Tokens: ERC-20 and ERC-721 share Transfer (ERC-721 indexes the token id: 4 topics).
  // Transfer(address,address,uint256)
  transfer: '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
  // TransferSingle(address,address,address,uint256,uint256)
  transferSingle: '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62',
  // TransferBatch(address,address,address,uint256[],uint256[])
  transferBatch: '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb',
  // ERC-7579 accounts: a module installed or uninstalled (both arguments unindexed in the standard).
  // ModuleInstalled(uint256,address)
  moduleInstalled: '0xd21d0b289f126c4b473ea641963e766833c2f13866e4ff480abd787c100ef123',
  // ModuleUninstalled(uint256,address)
  moduleUninstalled: '0x341347516a9de374859dfda710fa4828b2d48cb57d4fbe4c1149612b8e02276e',
} as const;
