import type pg from 'pg';

/**
 * Monthly partitions of usage_records, created ahead (last month through
 * `ahead` months from now, UTC) at every start. Rows outside them land in the
 * default partition, so a missing partition never refuses a usage record.
 */
export async function ensureUsagePartitions(pool: pg.Pool, now = new Date(), ahead = 2): Promise<string[]> {
  const months: string[] = [];
  for (let offset = -1; offset <= ahead; offset++) {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
    months.push(start.toISOString().slice(0, 10));
  }
  for (const month of months) {
    // Concurrent starters (cluster workers) race harmlessly: the loser's attach fails and is ignored.
    await pool.query('select gateway_ensure_usage_partition($1::date)', [month]).catch(() => undefined);
  }
  return months;
}
