/**
 * The devnet's ERC-7579 modules in Rhinestone's module registry (ERC-7484), which a Safe7579 account
 * asks before it installs a module: the registry refuses a module that too few of the attesters the
 * account trusts (set up by its launchpad) have attested (InsufficientAttestations). As on a real
 * chain, the modules' developer registers them under a resolver the registry knows (the one the
 * vendor recipe registered) and an attester vouches for them under its schema; here the operator
 * does both, as an attester of its own beside Rhinestone's, whom the Safe7579 accounts trust too
 * (vendorAccounts.ts).
 */
import { encodeAbiParameters, encodeFunctionData, parseAbi, zeroAddress, type Address } from 'viem';
import type { Operator } from './contracts.js';
import { VENDOR } from './vendorContracts.js';

const REGISTRY = parseAbi([
  'event NewResolver(bytes32 indexed uid, address indexed resolver)',
  'function registerSchema(string schema, address validator) returns (bytes32 uid)',
  'function registerModule(bytes32 resolverUID, address moduleAddress, bytes metadata, bytes resolverContext)',
  'function attest(bytes32 schemaUID, (address moduleAddr, uint48 expirationTime, bytes data, uint256[] moduleTypes) request)',
]);

/** The operator's attestation schema: a note, checked by no schema validator. */
const SCHEMA = 'string note';

/**
 * Registers `modules` in the registry and has the operator attest them (the executor as type 2, the
 * hook as type 4, with no expiry), so that an account trusting the operator may install them.
 */
export async function attestDevnetModules(operator: Operator, modules: { executor: Address; hook: Address }): Promise<void> {
  const registry = VENDOR.moduleRegistry;
  const client = operator.public;
  const [registered] = await client.getLogs({
    address: registry,
    event: REGISTRY[0],
    args: { resolver: VENDOR.moduleRegistryResolver },
    fromBlock: 0n,
  });
  const resolverUID = registered?.args.uid;
  if (!resolverUID) throw new Error(`the module registry ${registry} has no resolver ${VENDOR.moduleRegistryResolver} registered`);
  const { result: schemaUID } = await client.simulateContract({
    account: operator.account,
    address: registry,
    abi: REGISTRY,
    functionName: 'registerSchema',
    args: [SCHEMA, zeroAddress],
  });
  const send = (data: Parameters<typeof encodeFunctionData<typeof REGISTRY>>[0]) =>
    operator.sendAndWait({ to: registry, data: encodeFunctionData(data) });
  await send({ abi: REGISTRY, functionName: 'registerSchema', args: [SCHEMA, zeroAddress] });
  const note = encodeAbiParameters([{ type: 'string' }], ['a module of the opscan devnet (devnet/contracts/DevnetModules.sol)']);
  for (const [module, moduleType] of [
    [modules.executor, 2n],
    [modules.hook, 4n],
  ] as const) {
    await send({ abi: REGISTRY, functionName: 'registerModule', args: [resolverUID, module, '0x', '0x'] });
    await send({
      abi: REGISTRY,
      functionName: 'attest',
      args: [schemaUID, { moduleAddr: module, expirationTime: 0, data: note, moduleTypes: [moduleType] }],
    });
  }
}
