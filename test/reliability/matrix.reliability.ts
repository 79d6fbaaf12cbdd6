/**
 * The indexer field's shared reliability scenarios (restart recovery, reorg shapes, hostile values,
 * head latency, a stalled chain, the database paused, stopped and killed, a flaky provider, an RPC
 * URL of another chain, two indexer processes on one database), run against opscan as the Procfile
 * runs it: web, indexer and dispatcher as OS processes on a PostgreSQL database, the devnet
 * producing, a webhook receiver subscribed to the busiest bundler. Each case is judged as the field
 * judges it (judging.ts); the cases are grouped in cases/. The matrix is printed at the end with
 * numbered notes and the figures behind each glyph.
 *
 *   npm run test:reliability                 the full run
 *   npm run test:reliability -- --reduced    CI's shorter run (fewer kills, faults, blocks and samples)
 */
import { TEST_DATABASE_URL } from '../helpers/db.js';
import { chainShapeCases } from './cases/chainShapes.js';
import { databaseCases } from './cases/database.js';
import { providerCases } from './cases/provider.js';
import { reorgCases } from './cases/reorgs.js';
import { restartCases } from './cases/restarts.js';
import { sharedDatabaseCases } from './cases/sharedDatabase.js';
import { Matrix, REDUCED } from './judging.js';

describe(`the field's reliability scenarios${REDUCED ? ' (reduced run)' : ''}`, function () {
  this.timeout(REDUCED ? 1_200_000 : 3_600_000);
  const matrix = new Matrix();

  before(function () {
    if (!TEST_DATABASE_URL) this.skip(); // the processes share one PostgreSQL
  });
  afterEach(() => matrix.stopCurrent());
  after(() => matrix.print());

  restartCases(matrix);
  reorgCases(matrix);
  chainShapeCases(matrix);
  databaseCases(matrix);
  providerCases(matrix);
  sharedDatabaseCases(matrix);
});
