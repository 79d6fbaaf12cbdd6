/** Our human-readable EntryPoint fragments against the published artifacts of v0.6, v0.7, v0.8. */
import { expect } from 'chai';
import { Interface, id } from 'ethers';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SELECTORS } from '../../../indexer/decode/abi.js';
import { TOPICS } from '../../../shared/chain/constants.js';

const require = createRequire(import.meta.url);
const artifact = (pkg: string): Interface => new Interface((require(`${pkg}/artifacts/EntryPoint.json`) as { abi: [] }).abi);

describe('decode/abi', () => {
  it('has the v0.6 handleOps, handleAggregatedOps and innerHandleOp selectors of the published EntryPoint', () => {
    const ep = artifact('ep06');
    expect(SELECTORS.handleOpsV06).to.equal(ep.getFunction('handleOps')!.selector).and.equal('0x1fad948c');
    expect(SELECTORS.handleAggregatedOpsV06).to.equal(ep.getFunction('handleAggregatedOps')!.selector).and.equal('0x4b1d7cf5');
    expect(SELECTORS.innerHandleOpV06).to.equal(ep.getFunction('innerHandleOp')!.selector);
  });

  for (const pkg of ['ep07', 'ep08']) {
    it(`has the ${pkg} selectors (PackedUserOperation)`, () => {
      const ep = artifact(pkg);
      expect(SELECTORS.handleOpsV07).to.equal(ep.getFunction('handleOps')!.selector).and.equal('0x765e827f');
      expect(SELECTORS.handleAggregatedOpsV07).to.equal(ep.getFunction('handleAggregatedOps')!.selector).and.equal('0xdbed18e0');
      expect(SELECTORS.innerHandleOpV07).to.equal(ep.getFunction('innerHandleOp')!.selector);
    });
  }

  it('has the event topics every version emits (the version comes from the address, never the topic)', () => {
    for (const pkg of ['ep06', 'ep07', 'ep08']) {
      const ep = artifact(pkg);
      for (const name of [
        'UserOperationEvent',
        'AccountDeployed',
        'UserOperationRevertReason',
        'BeforeExecution',
        'SignatureAggregatorChanged',
        'Deposited',
        'Withdrawn',
        'StakeLocked',
        'StakeUnlocked',
        'StakeWithdrawn',
      ]) {
        const key = (name[0]!.toLowerCase() + name.slice(1)) as keyof typeof TOPICS;
        expect(TOPICS[key], `${pkg} ${name}`).to.equal(ep.getEvent(name)!.topicHash);
      }
    }
    for (const pkg of ['ep07', 'ep08']) {
      const ep = artifact(pkg);
      expect(TOPICS.postOpRevertReason).to.equal(ep.getEvent('PostOpRevertReason')!.topicHash);
      expect(TOPICS.userOperationPrefundTooLow).to.equal(ep.getEvent('UserOperationPrefundTooLow')!.topicHash);
    }
  });

  it('has each topic equal to the keccak-256 of the signature written above it', () => {
    // The topics are written out so that a process reading them does not load ethers to hash them.
    const root = new URL('../../../', import.meta.url);
    const source = readFileSync(new URL('shared/chain/constants.ts', root), 'utf8');
    const written = [...source.matchAll(/\/\/ (\w+\([^)]*\))\n\s+(\w+): '(0x[0-9a-f]{64})'/g)];
    expect(written.map((m) => m[2]).sort()).to.deep.equal(Object.keys(TOPICS).sort());
    for (const [, signature, name, topic] of written) {
      expect(topic, name)
        .to.equal(id(signature!))
        .and.equal(TOPICS[name as keyof typeof TOPICS]);
    }
  });
});
