import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { type Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../libs/config/config.ts';
import { ERASURE_LEDGER_FILE } from '../../libs/erasure/erasure-ledger.ts';
import { type BackupManifest, MANIFEST_FILE } from '../../libs/lifecycle/backup-manifest.ts';
import type { Database } from '../../libs/storage/database.ts';
import { openPostgres } from '../../libs/storage/postgres.ts';
import { startTestCairn, type TestCairn, unlimited } from '../support/cairn.ts';
import { runCli } from '../support/cli-process.ts';
import { tempDir, testConfig, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { projectionTotals } from '../support/projection-invariants.ts';

const EMBEDDED = { DATABASE_URL: '', REDIS_URL: '', CAIRN_MASTER_KEY: '' };
const ERASED = 'gone-business';
const KEPT = 'kept-business';

/** Rows of each Postgres table whose text names `business` (columns, arrays, JSON alike). */
async function postgresRowsNaming(db: Kysely<Database>, business: string) {
  const { rows: tables } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(
    db,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from ${sql.table(name)} as r
      where strpos(r::text, ${business}) > 0`.execute(db);
    if (Number(rows[0]?.n) > 0) counts[name] = Number(rows[0]?.n);
  }
  return counts;
}

/** Rows of `business` in every ClickHouse table that has a business column. */
async function clickhouseRowsOf(ch: ClickHouseClient, business: string) {
  const tables = await (
    await ch.query({
      query: `SELECT table FROM system.columns WHERE database = currentDatabase()
        AND name = 'business' AND table IN (SELECT name FROM system.tables
          WHERE database = currentDatabase() AND engine LIKE '%MergeTree')`,
      format: 'JSONEachRow',
    })
  ).json<{ table: string }>();
  let rows = 0;
  for (const { table } of tables) {
    const [row] = await (
      await ch.query({
        query: `SELECT count() AS n FROM ${table} WHERE business = {business:String}`,
        query_params: { business },
        format: 'JSONEachRow',
      })
    ).json<{ n: number }>();
    rows += Number(row?.n);
  }
  return { tables: tables.length, rows };
}

const projected = (cairn: TestCairn) =>
  waitFor(
    async () => {
      const totals = await projectionTotals(cairn.db, cairn.engines.clickhouse.client);
      return totals.rows >= totals.outbox;
    },
    { timeoutMs: 60_000 },
  );

/** What names `business` in the PGlite of a restored data directory (its chDB left closed). */
async function postgresRowsIn(dataDir: string, business: string) {
  const pg = await openPostgres({ dataDir: path.join(dataDir, 'pg') });
  try {
    return await postgresRowsNaming(pg.db, business);
  } finally {
    await pg.close();
  }
}

describe('a restore re-applies the erasures the backup does not reflect', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  }, 120_000);

  it('erases again a business erased after the backup, tokens and idempotency records included, and says so', async () => {
    const setup = await testConfig(EMBEDDED, { servers: false });
    cleanup.push(() => setup.cleanup());
    const { dataDir } = setup.config;
    const source = await startTestCairn({
      config: setup.config,
      businesses: [KEPT],
      rateLimits: unlimited(),
    });
    cleanup.push(() => source.close());
    const onlyErased = await source.token({ businesses: [ERASED] });
    const both = await source.token({ businesses: [KEPT, ERASED] });
    const gids: string[] = [];
    for (let i = 0; i < 6; i++) {
      for (const [business, headers] of [
        [ERASED, onlyErased],
        [KEPT, source.auth],
      ] as const) {
        const created = await http(source.url, 'POST', '/api/v1/tasks', {
          body: { business, name: `${business} ${i}`, project: `p${i % 2}` },
          headers: { ...headers, 'Idempotency-Key': `${business}-${i}` },
        });
        expect(created.status).toBe(201);
        if (business === ERASED) gids.push(created.body.data.gid);
      }
    }
    const edge = await http(source.url, 'POST', `/api/v1/tasks/${gids[0]}/dependencies`, {
      body: { dependencies: [gids[1], gids[2]] },
      headers: both,
    });
    expect(edge.status).toBe(200);
    await projected(source);
    const scratch = await tempDir('cairn-restore-erasures-');
    cleanup.push(() => fs.rm(scratch, { recursive: true, force: true }));
    const before = path.join(scratch, 'before-erasure');
    await runCli(dataDir, ['backup', '--to', before]);

    const erase = await http(source.url, 'DELETE', `/api/v1/businesses/${ERASED}`, {
      headers: source.master,
    });
    expect(erase.status).toBe(202);
    const erasure = await waitFor(
      async () => {
        const res = await http(source.url, 'GET', `/api/v1/businesses/${ERASED}/erasure`, {
          headers: source.master,
        });
        return res.body.data.status === 'done' ? res.body.data : undefined;
      },
      { timeoutMs: 90_000 },
    );
    // The ledger: owner-only, naming the business, when, and an id; nothing else.
    const ledgerFile = path.join(dataDir, ERASURE_LEDGER_FILE);
    expect((await fs.stat(ledgerFile)).mode & 0o777).toBe(0o600);
    const ledger = JSON.parse(await fs.readFile(ledgerFile, 'utf8'));
    expect(ledger).toEqual({
      format: 'cairn-erasure-ledger',
      erasures: [
        {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          business: ERASED,
          erased_at: erasure.finished_at,
        },
      ],
    });

    // The business comes back after its erasure, and a backup is taken after that.
    const reborn = await source.token({ businesses: [ERASED] });
    const again = await http(source.url, 'POST', '/api/v1/tasks', {
      body: { business: ERASED, name: 'after the erasure' },
      headers: reborn,
    });
    expect(again.status).toBe(201);
    await projected(source);
    const after = path.join(scratch, 'after-erasure');
    await runCli(dataDir, ['backup', '--to', after]);
    const afterManifest = JSON.parse(
      await fs.readFile(path.join(after, MANIFEST_FILE), 'utf8'),
    ) as BackupManifest;
    expect(afterManifest.erasures).toMatchObject({ file: ERASURE_LEDGER_FILE, entries: 1 });
    expect(JSON.parse(await fs.readFile(path.join(after, ERASURE_LEDGER_FILE), 'utf8'))).toEqual(
      ledger,
    );
    await source.close();

    // Without a ledger that knows of it, an older backup brings the business back: the
    // reason a restore reads one.
    const blind = path.join(scratch, 'blind');
    const blindRun = await runCli(blind, ['restore', '--from', before]);
    expect(blindRun.stdout).toContain('No business to erase again (the erasure ledgers name 0).');
    expect(await postgresRowsIn(blind, ERASED)).toMatchObject({
      tasks: 6,
      task_dependencies: 2,
      idempotency_keys: 6,
      api_tokens: 2,
    });

    // Into a new directory, given the installation's ledger.
    const elsewhere = path.join(scratch, 'elsewhere');
    const given = await runCli(elsewhere, ['restore', '--from', before, '--erasures', ledgerFile]);
    expect(given.stdout).toContain(
      `Erased again, as erased after the backup was taken: ${ERASED} (erased ${erasure.finished_at}).`,
    );
    expect(await postgresRowsIn(elsewhere, ERASED)).toEqual({ business_erasures: 1 });
    expect(await postgresRowsIn(elsewhere, KEPT)).toMatchObject({ tasks: 6 });

    // A backup taken after the erasure: what the business wrote since is kept.
    const later = path.join(scratch, 'later');
    const laterRun = await runCli(later, ['restore', '--from', after, '--erasures', ledgerFile]);
    expect(laterRun.stdout).toContain('No business to erase again (the erasure ledgers name 1).');
    expect(await postgresRowsIn(later, ERASED)).toMatchObject({ tasks: 1 });

    // In place of the installation: its own ledger is read before it is replaced.
    const replaced = await runCli(dataDir, ['restore', '--from', before, '--replace']);
    expect(replaced.stdout).toContain(
      `Erased again, as erased after the backup was taken: ${ERASED} (erased ${erasure.finished_at}).`,
    );
    const aside = /The installation it replaced is in (\S+);/.exec(replaced.stdout)?.[1] ?? '';
    cleanup.push(() => fs.rm(aside, { recursive: true, force: true }));
    expect(JSON.parse(await fs.readFile(ledgerFile, 'utf8'))).toEqual(ledger);

    const restored = await startTestCairn({
      config: loadConfig({
        DATA_DIR: dataDir,
        PORT: '0',
        LOG_LEVEL: 'silent',
        CAIRN_PROJECTOR_POLL_MS: '100',
      }),
      issueToken: false,
      rateLimits: unlimited(),
    });
    cleanup.push(() => restored.close());
    await projected(restored);
    const ch = restored.engines.clickhouse.client;
    // Nothing of it in ClickHouse (facts and every rollup), in Postgres only its erasure record.
    const inClickHouse = await clickhouseRowsOf(ch, ERASED);
    expect(inClickHouse.tables).toBeGreaterThan(5);
    expect(inClickHouse.rows).toBe(0);
    expect(await postgresRowsNaming(restored.db, ERASED)).toEqual({ business_erasures: 1 });
    expect((await clickhouseRowsOf(ch, KEPT)).rows).toBeGreaterThan(0);
    // Its tokens: the one bound to it alone is revoked, the other keeps only the kept business.
    const self = (headers: { Authorization: string }) =>
      http(restored.url, 'GET', '/api/v1/tokens/self', { headers });
    expect((await self(onlyErased)).status).toBe(401);
    const kept = await self(both);
    expect(kept.status).toBe(200);
    expect(kept.body.data.businesses).toEqual([KEPT]);
    const listed = await http(restored.url, 'GET', `/api/v1/tasks?business=${KEPT}`, {
      headers: both,
    });
    expect(listed.body.meta.total).toBe(6);
  }, 600_000);
});
