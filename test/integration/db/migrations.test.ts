import { expect } from 'chai';
import { openOrm } from '../../../src/db/orm';
import { testDatabase } from '../../support/db';
import { entities } from '../../../src/entities';

describe('database schema', () => {
  it('has a committed migration for every entity change (entities = snapshot)', async () => {
    const db = await testDatabase();
    // The snapshot beside the migration files is read in authoring mode only.
    const orm = await openOrm(db.url, entities, { authoring: true, poolMax: 1 });
    try {
      const drift = await orm.migrator.checkSchema();
      expect(drift, 'entities differ from src/db/migrations/.snapshot.json: run npm run migration:create').to.equal(false);
    } finally {
      await orm.close(true);
    }
  });

  it('has applied every migration, including the partitioned usage table', async () => {
    const db = await testDatabase();
    expect(await db.orm.migrator.getPending()).to.deep.equal([]);
    const result = await db.pool.query("select relkind from pg_class where relname = 'usage_records'");
    expect(result.rows[0]?.relkind).to.equal('p');
  });
});

describe('usage partitions', () => {
  it('creates monthly partitions ahead and routes rows into them', async () => {
    const db = await testDatabase();
    const { ensureUsagePartitions } = await import('../../../src/metering/usage-partitions');
    const months = await ensureUsagePartitions(db.pool, new Date('2031-05-17T00:00:00Z'));
    expect(months).to.deep.equal(['2031-04-01', '2031-05-01', '2031-06-01', '2031-07-01']);
    const parts = await db.pool.query("select relname from pg_class where relkind = 'r' and relname like 'usage_records_2031_%' order by relname");
    expect(parts.rows.map((r) => r.relname)).to.deep.equal(['usage_records_2031_04', 'usage_records_2031_05', 'usage_records_2031_06', 'usage_records_2031_07']);
  });
});
