/** Starts a chain, prints its state folder, and waits to be killed (test/devnet/chain.test.ts). */
import { startChain } from '../../../devnet/chain.js';

const chain = await startChain();
console.log(chain.stateDir);
setInterval(() => undefined, 60_000);
