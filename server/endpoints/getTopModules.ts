import { z } from 'zod';
import * as moduleEvents from '../../shared/db/tables/moduleEvents.js';
import { moduleSummarySchema, moduleTypeOf } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { defaultedNetworkInput, pageInput, servedNetwork } from './inputs.js';

export const getTopModules = defineEndpoint({
  summary: 'ERC-7579 modules ranked by the accounts that have them installed now (ties by address).',
  description:
    'An account counts once per module whatever types it installed it as; `moduleTypeIds` lists the types across accounts. A module every account uninstalled is not listed.',
  tag: 'Account',
  input: z.object({ network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ modules: z.array(moduleSummarySchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const top = await moduleEvents.listTopByAccounts(ctx.db, network.chainId, input);
    return {
      modules: top.map((m) => ({
        module: m.module,
        moduleTypeIds: m.moduleTypeIds,
        moduleTypes: m.moduleTypeIds.map(moduleTypeOf),
        accountsLength: m.accounts,
      })),
    };
  },
});
