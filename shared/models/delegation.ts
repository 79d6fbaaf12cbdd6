import { z } from 'zod';
import { DELEGATION_STATUSES } from '../db/tables/delegations.js';
import { addressOut, decimalString, hashOut } from './primitives.js';

/** One EIP-7702 authorization an address signed, as getAccountDelegations and GraphQL answer it. */
export const delegationSchema = z
  .object({
    /** The code the authorization points the address at; null when it clears the delegation (address zero). */
    delegate: addressOut.nullable(),
    blockNumber: decimalString,
    blockTime: decimalString,
    transactionHash: hashOut,
    authorizationNonce: decimalString,
    /** The chain id the authorization names (0: any chain). */
    authorizationChainId: decimalString,
    /** Carried by a bundle transaction (a bundler sent it with an op), not by a transaction of its own. */
    viaUserOp: z.boolean(),
    /**
     * effective: the chain applied it; wrong_chain_id, wrong_nonce, invalid_signature: why it did
     * not; unverified: the node no longer held the state to tell.
     */
    status: z.enum(DELEGATION_STATUSES),
  })
  .meta({ id: 'Delegation' });
export type Delegation = z.infer<typeof delegationSchema>;

/** getAccountDelegations. */
export const accountDelegationsSchema = z
  .object({
    /** The delegate its latest effective authorization set; null when none did or that one cleared it. */
    current: addressOut.nullable(),
    /** Its authorizations, newest first, those that did not take effect included. */
    history: z.array(delegationSchema),
  })
  .meta({ id: 'AccountDelegations' });
