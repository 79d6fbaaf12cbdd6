import { dropStaleTestDatabases } from './helpers/db.js';

/** Mocha root hooks (see .mocharc.json). */
export const mochaHooks = {
  async beforeAll() {
    await dropStaleTestDatabases();
  },
};
