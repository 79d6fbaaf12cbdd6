/**
 * Compiled contracts the devnet deploys: the EntryPoint packages' own artifacts (ep06/ep07/ep08,
 * npm aliases of @account-abstraction/contracts) and our fixtures from devnet/contracts/artifacts
 * (built by devnet/contracts/build.ts and committed).
 */
import { createRequire } from 'node:module';
import type { InterfaceAbi } from 'ethers';
import type { EpVersion } from './userop.js';

export type Artifact = { contractName: string; abi: InterfaceAbi; bytecode: string; deployedBytecode?: string };

const require = createRequire(import.meta.url);
const EP_PACKAGE: Record<EpVersion, string> = { 'v0.6': 'ep06', 'v0.7': 'ep07', 'v0.8': 'ep08' };

/** An artifact shipped by the version's @account-abstraction/contracts package. */
export function entryPointPackageArtifact(version: EpVersion, name: string): Artifact {
  return require(`${EP_PACKAGE[version]}/artifacts/${name}.json`) as Artifact;
}

export function entryPointArtifact(version: EpVersion): Artifact {
  return entryPointPackageArtifact(version, 'EntryPoint');
}

export type FixtureName =
  | 'MiniAccountFactoryV06'
  | 'MiniAccountFactoryV07'
  | 'SponsorPaymasterV06'
  | 'SponsorPaymasterV07'
  | 'TestERC20'
  | 'TestERC721'
  | 'TestERC1155'
  | 'Reverter'
  | 'BundleMulticall'
  | 'OZ7579Account'
  | 'OZ7579AccountFactory'
  | 'DevnetExecutorModule'
  | 'DevnetHookModule';

export function fixtureArtifact(name: FixtureName): Artifact {
  return require(`./contracts/artifacts/${name}.json`) as Artifact;
}
