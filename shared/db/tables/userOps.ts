/**
 * The `user_ops` table, one module per job: its stored form (userOps/storedForm.ts), its reads
 * (userOps/reads.ts), its writes (userOps/writes.ts) and the subgraph's view of it
 * (userOps/graphqlView.ts). Callers import them all from here.
 */
export type { UserOpCall } from './userOpCalls.js';
export {
  beneficiaryOf,
  keptByBundle,
  opContainers,
  withInputFields,
  type NewUserOp,
  type OpContainers,
  type StoredUserOp,
  type UserOpRow,
} from './userOps/storedForm.js';
export {
  countInBlock,
  exists,
  findByHash,
  listByBlock,
  listByBundler,
  listByHash,
  listByPaymaster,
  listBySender,
  listByTransaction,
  listFailures,
  listLatest,
  listStoredByHashes,
  listTraceNeededTransactions,
} from './userOps/reads.js';
export { appendMany, deleteAbove, insertMany, setRevertMessage, updateDecoded, type RemovedUserOp } from './userOps/writes.js';
export { userOpView } from './userOps/graphqlView.js';
