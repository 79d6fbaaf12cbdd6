/**
 * The devnet: a local anvil chain running the real EntryPoint v0.6, v0.7 and v0.8 at their
 * canonical addresses, with generated ERC-4337 traffic and a ground truth of what happened.
 *
 *   const devnet = await startDevnet();                       // chain + contracts
 *   const truth = await generate(devnet, { ops: 500, days: 3 });
 *   const change = await reorg(devnet, 3);                    // replace the last 3 blocks
 *   const traffic = startContinuous(devnet, { intervalMs: 2000 });
 *   await traffic.stop(); await devnet.stop();
 */
export { startDevnet, deployAll, defaultGenesisTimestamp, type Devnet, type StartDevnetOptions } from './devnet.js';
export { generate, type GenerateOptions } from './generate.js';
export { reorg, type ReorgOptions, type ReorgResult, type BlockRef } from './reorg.js';
export { startContinuous, mineTrafficBlock, type ContinuousOptions, type ContinuousTraffic } from './continuous.js';
export { computeDays, knownAddresses, knownPlainTransfers } from './truth.js';
export type { GroundTruth, TruthUserOp, TruthBundle, TruthAccount, TruthTransfer, TruthPlainTransfer, TruthDay } from './truth.js';
export type { Deployment } from './deploy.js';
export type { LayoutOptions } from './plan.js';
export { userOpHash, EP_VERSIONS, type EpVersion, type UserOp } from './userop.js';
export { DEVNET_CHAIN_ID } from './chain.js';
