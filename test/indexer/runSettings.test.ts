/**
 * A network's run settings come from the configuration, each one absent taking the default the
 * configuration itself gives an unset variable, and the tuning knobs given over the defaults.
 */
import { expect } from 'chai';
import { indexerEnvSchema } from '../../shared/config.js';
import { DEFAULT_TUNING } from '../../indexer/tuning.js';
import { runSettingsOf } from '../../indexer/runSettings.js';

describe('runSettingsOf', () => {
  it('gives an absent setting the value an unset variable gets from the configuration', () => {
    const unset = indexerEnvSchema.parse({});
    expect(runSettingsOf({})).to.deep.equal({
      pollIntervalMs: unset.INDEXER_POLL_INTERVAL_MS,
      traces: unset.INDEXER_TRACES,
      transfers: unset.INDEXER_TRANSFERS,
      transferLookbackBlocks: unset.INDEXER_TRANSFER_LOOKBACK_BLOCKS,
      delegations: unset.INDEXER_DELEGATIONS,
      tuning: DEFAULT_TUNING,
    });
    expect(runSettingsOf({}).transfers).to.equal('known');
    expect(runSettingsOf({}).delegations).to.equal('ops');
  });

  it('takes the configured settings, and the tuning given over the default knobs', () => {
    const settings = runSettingsOf(
      {
        INDEXER_POLL_INTERVAL_MS: 250,
        INDEXER_TRACES: 'off',
        INDEXER_TRANSFERS: 'ops',
        INDEXER_TRANSFER_LOOKBACK_BLOCKS: 0,
        INDEXER_DELEGATIONS: 'all',
      },
      { rpcTimeoutMs: 500 },
    );
    expect(settings).to.deep.include({
      pollIntervalMs: 250,
      traces: 'off',
      transfers: 'ops',
      transferLookbackBlocks: 0,
      delegations: 'all',
    });
    expect(settings.tuning).to.deep.equal({ ...DEFAULT_TUNING, rpcTimeoutMs: 500 });
  });
});
