// A batch the engine refuses is split down to the fact it cannot take, the projector says so in
// its log, and another business's facts on either side of it are projected all the same.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { projectNext } from '../../libs/projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts, factFor } from '../support/projection-invariants.ts';

/** Facts of one instant: where a test's facts land in time is not what it tests. */
const fact = (business: string, gid: string) =>
  factFor(business, gid, new Date('2026-11-22T09:00:00Z'));

describe('projector with a fact the engine refuses', () => {
  const scratch = useMigratedPostgres();

  it('splits the batch, logs it, and projects the other business around it', {
    timeout: 120_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client);
      const db = scratch.pg.db;
      await appendFacts(
        db,
        Array.from({ length: 10 }, (_, i) => fact('other', `before-${i}`)),
      );
      // A corrupt row (no write produces it): ClickHouse cannot parse its due date.
      const poison = fact('poisoned', 'bad');
      await sql`insert into outbox (kind, business, task_gid, payload, occurred_at)
        values ('task_created', 'poisoned', 'bad',
          ${JSON.stringify({ ...poison.payload, due_on: 'not-a-date' })}::jsonb, ${poison.occurred_at})`.execute(
        db,
      );
      await appendFacts(
        db,
        Array.from({ length: 10 }, (_, i) => fact('other', `after-${i}`)),
      );
      const lines: Array<{ level: string; message: string }> = [];
      const logger = {
        info: (_: unknown, message: string) => lines.push({ level: 'info', message }),
        warn: (_: unknown, message: string) => lines.push({ level: 'warn', message }),
        error: (_: unknown, message: string) => lines.push({ level: 'error', message }),
      };
      const deps = { db, clickhouse: ch.client, batchSize: 100, logger };
      let failures = 0;
      const projected = async () =>
        (
          await ch.client.query({
            query:
              'SELECT business, count() AS n, uniqExact(fact_id) AS u FROM facts GROUP BY business ORDER BY business',
            format: 'JSONEachRow',
          })
        ).json<{ business: string; n: number; u: number }>();
      // The live projector retries on its timer; here each attempt is one call. On a shared
      // Postgres server a batch may not be ready yet (an older transaction still running), so
      // this polls until every fact is in rather than stopping at the first empty attempt.
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        try {
          if ((await projectNext(deps)).facts > 0) continue;
        } catch {
          failures += 1;
          continue;
        }
        if ((await projected()).reduce((sum, row) => sum + Number(row.n), 0) >= 21) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(failures).toBeGreaterThan(0);
      const counts = await projected();
      expect(counts.map((row) => [row.business, Number(row.n), Number(row.u)])).toEqual([
        ['other', 20, 20],
        ['poisoned', 1, 1],
      ]);
      expect(lines.some((line) => line.message.includes('projecting its first'))).toBe(true);
      expect(lines.some((line) => line.level === 'error' && line.message.includes('refuses'))).toBe(
        true,
      );
      await expectRollupsMatchFacts(ch.client);
    } finally {
      await ch.close();
    }
  });
});
