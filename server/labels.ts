import type { NetworkConfig } from '../shared/config.js';

/**
 * Names of well-known contracts, for the `*_label` fields: the EntryPoints (canonical and any
 * configured for the network: config.networks lists both) and the canonical account factories (same address on every chain).
 */
const CANONICAL_FACTORIES: Readonly<Record<string, string>> = {
  '0x9406cc6185a346906296840746125a0e44976454': 'SimpleAccountFactory v0.6',
  '0x91e60e0613810449d098b0b5ec8b51a0fe8c8985': 'SimpleAccountFactory v0.7',
  '0x00004ec70002a32400f8ae005a26081065620d20': 'LightAccountFactory v1.1',
  '0x0000000000400cdfef5e2714e63d8040b700bc24': 'LightAccountFactory v2.0',
  '0x000000a56aaca3e9a4c479ea6b6cd0dbcb6634f5': 'Biconomy SmartAccountFactory v2',
  '0x5de4839a76cf55d0c90e2061ef4386d962e15ae3': 'Kernel Factory v2',
  '0x0ba5ed0c6aa8c49038f819e587e2633c4a9f428a': 'Coinbase Smart Wallet Factory',
};

export function labelOf(network: NetworkConfig, address: string | null): string | null {
  if (!address) return null;
  const entryPoint = network.entryPoints.find((e) => e.address === address);
  if (entryPoint) return `EntryPoint ${entryPoint.version}`;
  return CANONICAL_FACTORIES[address] ?? null;
}
