import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../libs/storage/clickhouse.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { projectAll } from '../support/analytics.ts';
import { randomSecret } from '../support/auth.ts';
import {
  createTestDatabase,
  SERVER_REDIS_URL,
  type TestDatabase,
  tempDir,
  uniqueName,
} from '../support/engines.ts';
import { http } from '../support/http.ts';
import { projectionTotals } from '../support/projection-invariants.ts';
import { spawnServer } from '../support/server-process.ts';

const MASTER_KEY = randomSecret();

describe('SIGTERM under load', () => {
  let database: TestDatabase;
  let pg: Postgres;
  beforeAll(async () => {
    database = await createTestDatabase();
    pg = await openPostgres({ url: database.url });
  });
  afterAll(async () => {
    await pg.close();
    await database.drop();
  });

  it('answers every request it accepted, finishes its batch, and exits 0', async () => {
    const dataDir = await tempDir();
    const server = await spawnServer({
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: SERVER_REDIS_URL,
      CAIRN_REDIS_PREFIX: uniqueName('cairn_sd'),
      CAIRN_MASTER_KEY: MASTER_KEY,
      CAIRN_PROJECTOR_POLL_MS: '50',
      CAIRN_PROJECTOR_BATCH_SIZE: '20',
      LOG_LEVEL: 'silent',
    });
    const issued = await http(server.url, 'POST', '/api/v1/tokens', {
      headers: { Authorization: `Bearer ${MASTER_KEY}` },
      body: {
        name: 'load',
        scopes: ['workflows:write'],
        businesses: ['sd'],
        kind: 'service_account',
      },
    });
    expect(issued.status).toBe(201);
    const auth = { Authorization: `Bearer ${issued.body.data.token}` };

    const created: string[] = [];
    const failures: Record<string, number> = {};
    let stopped = false;
    const worker = async (w: number) => {
      for (let i = 0; !stopped; i++) {
        try {
          const res = await http(server.url, 'POST', '/api/v1/tasks', {
            headers: auth,
            body: { business: 'sd', name: `w${w}-${i}`, project: `p${w}` },
          });
          if (res.status === 201) created.push(res.body.data.gid);
          else failures[`status ${res.status}`] = (failures[`status ${res.status}`] ?? 0) + 1;
        } catch (error) {
          const code = (error as { cause?: { code?: string } }).cause?.code ?? 'other';
          failures[code] = (failures[code] ?? 0) + 1;
          // Refused: the server has stopped accepting, so the load is over.
          if (code === 'ECONNREFUSED') stopped = true;
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(worker));
    while (created.length < 200) await new Promise((resolve) => setTimeout(resolve, 20));
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    stopped = true;
    await load;

    expect(exit).toEqual({ code: 0, signal: null });
    // No request was lost: every task the server committed was answered with its 201.
    const tasks = await pg.db.selectFrom('tasks').select('gid').execute();
    expect(new Set(tasks.map((t) => t.gid))).toEqual(new Set(created));
    // The only failure a client may see is a refused connection: never a reset mid-request.
    expect(Object.keys(failures).filter((k) => k !== 'ECONNREFUSED')).toEqual([]);

    // The batch in hand finished: no half-written batch is left for the next start.
    const checkpoint = await sql<{ pending_id: string | null }>`
      select pending_id from projector_checkpoints where name = 'facts'`.execute(pg.db);
    expect(checkpoint.rows[0]?.pending_id ?? null).toBeNull();

    // No fact was lost or doubled: the next projector (here, this process) completes the rest.
    const ch = await openClickHouse({ dataDir: `${dataDir}/ch` });
    try {
      // Drained until every fact is in: another file's open transaction on this shared server
      // can hold the last ones back a while (the late-commit rule is cluster-wide).
      await projectAll({ postgres: pg, clickhouse: ch }, 500);
      const totals = await projectionTotals(pg.db, ch.client);
      expect(totals.outbox).toBeGreaterThanOrEqual(created.length);
      expect({ rows: totals.rows, distinct: totals.distinct }).toEqual({
        rows: totals.outbox,
        distinct: totals.outbox,
      });
      expect(totals.clickhouse).toEqual(totals.postgres);
    } finally {
      await ch.close();
    }
  });
});
