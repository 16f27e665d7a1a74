import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../libs/projection/outbox-reader.ts';
import {
  drainOutbox,
  FACTS_CHECKPOINT,
  releaseLiveProjector,
} from '../../libs/projection/projector.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { openPostgres } from '../../libs/storage/postgres.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { createTestDatabase, tempDir, useMigratedPostgres, waitFor } from '../support/engines.ts';
import { factFor } from '../support/projection-invariants.ts';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

/**
 * The servers' procedure of docs/operations.md ("Backup and restore") on the machine's
 * Postgres: `projector hold` around a ClickHouse copy, then pg_dump. chDB stands in for the
 * ClickHouse server (its copy is the table's rows in Native form where a server runs BACKUP).
 */
describe('backup of a server installation: projector hold, ClickHouse, then pg_dump', () => {
  const source = useMigratedPostgres();
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  }, 60_000);

  it('restores to a checkpoint ClickHouse matches, and the projector resumes exactly once', async () => {
    const dir = await tempDir('cairn-server-backup-');
    cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
    const ch: ClickHouse = await openClickHouse({ dataDir: path.join(dir, 'ch') });
    cleanup.push(() => ch.close());
    await migrateClickHouse(ch.client);
    const db = source.pg.db;

    // Writes and a live projector, both running until the backup is done.
    let stop = false;
    let written = 0;
    const writer = (async () => {
      while (!stop) {
        await appendFacts(db, [factFor('acme', `t${written}`)]);
        written += 1;
      }
    })();
    const projector = (async () => {
      while (!stop) {
        if ((await drainOutbox({ db, clickhouse: ch.client, batchSize: 50 })) === 0) {
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    })();
    await waitFor(async () => written >= 50);

    const held = path.join(dir, 'held');
    const clickhouseDone = path.join(dir, 'clickhouse-done');
    const dump = path.join(dir, 'postgres.dump');
    const facts = path.join(dir, 'facts.native');
    const script = [
      'echo "$CAIRN_HELD_CHECKPOINT" > "$HELD"',
      'while [ ! -e "$CLICKHOUSE_DONE" ]; do sleep 0.05; done',
      'pg_dump --format=custom --file="$DUMP" "$DATABASE_URL"',
    ].join('\n');
    const cli = new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(
        TSX,
        ['apps/cli/main.ts', 'projector', 'hold', '--', 'sh', '-c', script],
        {
          env: {
            ...process.env,
            DATA_DIR: dir,
            DATABASE_URL: source.url,
            LOG_LEVEL: 'silent',
            HELD: held,
            CLICKHOUSE_DONE: clickhouseDone,
            DUMP: dump,
          },
        },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.stderr.on('data', (chunk) => {
        err += chunk;
      });
      child.once('exit', (code) => resolve({ code, out, err }));
    });
    // The ClickHouse copy first, while the projector is held.
    const checkpoint = await waitFor(
      () =>
        fs.readFile(held, 'utf8').then(
          (text) => text.trim() || undefined,
          () => undefined,
        ),
      { timeoutMs: 60_000 },
    );
    const writtenBeforeCopy = written;
    await ch.client.command({
      query: `INSERT INTO FUNCTION file({file:String}, 'Native') SELECT * FROM facts`,
      query_params: { file: facts },
    });
    // Writes go on between the two copies: the dump holds facts ClickHouse's copy does not.
    await waitFor(async () => written >= writtenBeforeCopy + 20);
    await fs.writeFile(clickhouseDone, '');
    const finished = await cli;
    stop = true;
    await Promise.all([writer, projector]);
    expect(finished.code, finished.err).toBe(0);
    expect(finished.err).toContain(`Projector held at checkpoint ${checkpoint}.`);
    expect(finished.out).toContain(
      `with the projector held at checkpoint ${checkpoint}; released.`,
    );
    // Released: nothing holds the source's projector any more.
    expect(
      await db.selectFrom('projector_checkpoints').select('name').execute(),
    ).not.toContainEqual({ name: 'facts_swap_hold' });

    // Restore: pg_restore into a new database, the ClickHouse copy into a new database.
    const target = await createTestDatabase();
    cleanup.push(() => target.drop());
    await run('pg_restore', ['--no-owner', `--dbname=${target.url}`, dump]);
    const restored = await openPostgres({ url: target.url });
    cleanup.push(() => restored.close());
    await ch.client.command({ query: 'CREATE DATABASE restored' });
    await ch.client.command({ query: 'CREATE TABLE restored.facts AS facts' });
    await ch.client.command({
      query: `INSERT INTO restored.facts SELECT * FROM file({file:String}, 'Native')`,
      query_params: { file: facts },
    });
    const resumedAt = await loadCheckpoint(restored.db, FACTS_CHECKPOINT);
    expect(`${resumedAt.cursor.xid}.${resumedAt.cursor.id}`).toBe(checkpoint);
    expect(resumedAt.pending).toBeNull();
    const count = async () => {
      const result = await ch.client.query({
        query: 'SELECT count() AS rows, uniqExact(fact_id) AS distinct FROM restored.facts',
        format: 'JSONEachRow',
      });
      const [row] = await result.json<{ rows: number; distinct: number }>();
      return { rows: Number(row?.rows), distinct: Number(row?.distinct) };
    };
    const outbox = await restored.db.selectFrom('outbox').select(['id']).orderBy('id').execute();
    expect((await count()).rows).toBeLessThan(outbox.length);

    // The dump carries the hold; a restore lifts it (or it lapses 30 s after the backup).
    await releaseLiveProjector(restored.db);
    await drainOutbox({
      db: restored.db,
      clickhouse: ch.client,
      batchSize: 7,
      table: 'restored.facts',
    });
    expect(await count()).toEqual({ rows: outbox.length, distinct: outbox.length });
    const ids = await ch.client.query({
      query: 'SELECT fact_id FROM restored.facts ORDER BY fact_id',
      format: 'JSONEachRow',
    });
    expect((await ids.json<{ fact_id: number }>()).map((row) => Number(row.fact_id))).toEqual(
      outbox.map((row) => Number(row.id)),
    );
  }, 300_000);
});
