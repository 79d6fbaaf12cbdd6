import { z } from 'zod';
import { accountModulesSchema } from '../../shared/models/index.js';
import { accountModules } from './accountModules.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, defaultedNetworkInput, servedNetwork } from './inputs.js';

export const getAccountModules = defineEndpoint({
  summary: "An account's ERC-7579 modules: those installed now, and every install and uninstall of its ops.",
  description:
    'From the `ModuleInstalled` / `ModuleUninstalled` events the account emitted during its ops, its deployment included ' +
    '(ERC-7579 defines no getter). `modules` holds each (moduleTypeId, module) pair whose latest event is an install, with that ' +
    'install, in install order; `history` every event, oldest first. `moduleType` names ids 1–4 (validator, executor, fallback, ' +
    'hook); any other id is `unknown`. An address without events answers two empty arrays.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput }),
  output: accountModulesSchema,
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    return accountModules(ctx.db, network.chainId, input.address);
  },
});
