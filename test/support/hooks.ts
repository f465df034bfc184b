// Root hooks. The database is started lazily by test/support/db.ts, so unit
// tests never pay for it; this closes whatever was opened.
import { closeTestDatabase } from './db';

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await closeTestDatabase();
  },
};
