import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { findErasure } from '../../libs/erasure/erasure.repository.ts';
import {
  ErasureAborted,
  type ErasureDeps,
  runErasure,
  startErasure,
} from '../../libs/erasure/erasure.service.ts';
import { createLogger } from '../../libs/observability/logger.ts';
import { readBatch } from '../../libs/projection/outbox-reader.ts';
import { classifyPostgresError } from '../../libs/storage/postgres-errors.ts';
import { startTestCairn, unlimited, useCairn } from '../support/cairn.ts';
import { SERVER_REDIS_URL, testConfig, waitFor } from '../support/engines.ts';
import { filesHolding } from '../support/files-holding.ts';
import { http } from '../support/http.ts';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');
const MASTER_KEY = 'erase-test-master-key-7f3a9c1e5b2d4680aa17';

const ERASED = 'acme-erased';
const KEPT = 'beta-kept';

type Headers = Record<string, string>;

const CACHED_QUERY = { metrics: ['tasks_created'], business: ERASED, period: 'all_time' };

/** The shapes of answer a dashboard asks for, from rollups and from facts. */
const QUERIES = [
  { metrics: ['tasks_created', 'tasks_completed'], period: 'all_time' },
  { metrics: ['tasks_created', 'completion_rate'], dimensions: ['day'], period: 'last_7_days' },
  { metrics: ['open_tasks', 'dependencies_added'], dimensions: ['project'], period: 'all_time' },
  {
    metrics: ['tasks_created', 'avg_cycle_time_hours'],
    dimensions: ['assignee', 'status'],
    period: 'last_30_days',
  },
];

describe('erasing a business', () => {
  /** Every line the service logs, as written. */
  const logLines: string[] = [];
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: MASTER_KEY },
    businesses: [ERASED],
    // Progress is polled with the master key: the test must never meet its rate limit.
    rateLimits: unlimited(),
    logger: createLogger('debug', { write: (line: string) => logLines.push(line) }),
  });
  let both: Headers;
  let kept: Headers;

  const ch = () => cairn.engines.clickhouse.client;
  const erasure = (): ErasureDeps => ({
    db: cairn.db,
    clickhouse: ch(),
    cluster: undefined,
    now: () => new Date(),
    masterKeys: [MASTER_KEY],
    batchSize: 1_000,
  });

  /** Tasks with labels, completions, an update, a deletion and dependency edges. */
  const populate = async (business: string, headers: Headers, count: number) => {
    const gids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business, name: `${business} ${i}`, project: `p${i % 2}`, assignee: `a${i % 3}` },
        headers: { ...headers, 'Idempotency-Key': `${business}-create-${i}` },
      });
      expect(res.status).toBe(201);
      gids.push(res.body.data.gid);
    }
    for (const gid of gids.slice(0, 2)) {
      const res = await http(cairn.url, 'PUT', `/api/v1/tasks/${gid}`, {
        body: { status: 'completed' },
        headers,
      });
      expect(res.status).toBe(200);
    }
    const edge = await http(cairn.url, 'POST', `/api/v1/tasks/${gids[2]}/dependencies`, {
      body: { dependencies: [gids[3], gids[4]] },
      headers: { ...headers, 'Idempotency-Key': `${business}-edge` },
    });
    expect(edge.status).toBe(200);
    expect((await http(cairn.url, 'DELETE', `/api/v1/tasks/${gids[5]}`, { headers })).status).toBe(
      204,
    );
    return gids;
  };

  /** Rows of `business` in each ClickHouse table that has a business column. */
  const clickhouseRows = async (business: string) => {
    const tables = await (
      await ch().query({
        query: `SELECT table FROM system.columns
          WHERE database = currentDatabase() AND name = 'business' ORDER BY table`,
        format: 'JSONEachRow',
      })
    ).json<{ table: string }>();
    const counts: Record<string, number> = {};
    for (const { table } of tables) {
      const [row] = await (
        await ch().query({
          query: `SELECT count() AS n FROM ${table} WHERE business = {business:String}`,
          query_params: { business },
          format: 'JSONEachRow',
        })
      ).json<{ n: number }>();
      counts[table] = Number(row?.n);
    }
    return counts;
  };

  /** Every Postgres table's rows whose text names `business` (columns, arrays, JSON alike). */
  const postgresRows = async (business: string) => {
    const { rows: tables } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'
      order by table_name`.execute(cairn.db);
    const counts: Record<string, number> = {};
    for (const { name } of tables) {
      const { rows } = await sql<{ n: string }>`
        select count(*)::text as n from ${sql.table(name)} as r
        where strpos(r::text, ${business}) > 0`.execute(cairn.db);
      counts[name] = Number(rows[0]?.n);
    }
    return counts;
  };

  /** No ClickHouse row of `business` anywhere; in Postgres only its own erasure record. */
  const expectErased = async (business: string) => {
    expect(Object.values(await clickhouseRows(business)).every((rows) => rows === 0)).toBe(true);
    expect(Object.values(await postgresRows(business)).reduce((a, b) => a + b, 0)).toBe(1);
  };

  /** Waits until ClickHouse holds every fact Postgres has of `business`. */
  const projected = (business: string) =>
    waitFor(
      async () => {
        const { rows } = await sql<{ n: string }>`
          select count(*)::text as n from outbox where business = ${business}`.execute(cairn.db);
        const [row] = await (
          await ch().query({
            query: 'SELECT count() AS n FROM facts WHERE business = {business:String}',
            query_params: { business },
            format: 'JSONEachRow',
          })
        ).json<{ n: number }>();
        return Number(rows[0]?.n) > 0 && Number(row?.n) === Number(rows[0]?.n);
      },
      { timeoutMs: 60_000 },
    );

  const erase = (business: string, headers: Headers = cairn.master) =>
    http(cairn.url, 'DELETE', `/api/v1/businesses/${business}`, { headers });

  const untilDone = (business: string) =>
    waitFor(
      async () => {
        const res = await http(cairn.url, 'GET', `/api/v1/businesses/${business}/erasure`, {
          headers: cairn.master,
        });
        expect(res.status).toBe(200);
        return res.body.data.status === 'done' ? res.body.data : undefined;
      },
      { timeoutMs: 90_000 },
    );

  const answers = async (headers: Headers) => {
    const out: unknown[] = [];
    for (const body of QUERIES) {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body,
        headers: { ...headers, 'Cache-Control': 'no-cache' },
      });
      expect(res.status).toBe(200);
      out.push(res.body.data);
    }
    return out;
  };

  beforeAll(async () => {
    both = await cairn.token({ businesses: [ERASED, KEPT] });
    kept = await cairn.token({ businesses: [KEPT] });
  });

  it('erases everything of the business and nothing of the others', async () => {
    await populate(ERASED, cairn.auth, 8);
    await populate(KEPT, kept, 7);
    // Kept answers, for the business and for all of a caller's businesses at once.
    const readKey = { 'Idempotency-Key': 'erased-read' };
    expect(
      (
        await http(cairn.url, 'POST', '/api/v1/query', {
          body: { metrics: ['tasks_created'], business: ERASED },
          headers: { ...both, ...readKey },
        })
      ).status,
    ).toBe(200);
    // The master key's kept answers are sealed: one names the business, one does not.
    for (const [key, businesses] of [
      ['token-erased', [ERASED]],
      ['token-kept', [KEPT]],
    ] as const) {
      const res = await http(cairn.url, 'POST', '/api/v1/tokens', {
        body: { name: key, scopes: ['analytics:read'], businesses },
        headers: { ...cairn.master, 'Idempotency-Key': key },
      });
      expect(res.status).toBe(201);
    }
    await projected(ERASED);
    await projected(KEPT);

    // A cached answer of the business (once the projector holds still, its watermark too).
    const cached = await waitFor(async () => {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body: CACHED_QUERY,
        headers: both,
      });
      return res.body.metadata.cache === 'hit' ? res : undefined;
    });
    expect(cached.body.data).toEqual([{ tasks_created: 8 }]);

    const before = await answers(kept);
    const chBefore = await clickhouseRows(ERASED);
    // Facts and every rollup hold some of it: the checks below are not vacuous.
    for (const [table, rows] of Object.entries(chBefore)) {
      if (table !== 'facts_rebuild') expect(rows, table).toBeGreaterThan(0);
    }
    const pgBefore = await postgresRows(ERASED);
    for (const table of [
      'tasks',
      'task_dependencies',
      'outbox',
      'api_tokens',
      'idempotency_keys',
    ]) {
      expect(pgBefore[table], table).toBeGreaterThan(0);
    }

    // Only the master key.
    expect((await erase(ERASED, {})).status).toBe(401);
    expect((await erase(ERASED, both)).status).toBe(403);
    expect((await erase(ERASED, cairn.auth)).status).toBe(403);
    expect(
      (await http(cairn.url, 'GET', `/api/v1/businesses/${ERASED}/erasure`, { headers: both }))
        .status,
    ).toBe(403);

    const started = await erase(ERASED);
    expect(started.status).toBe(202);
    expect(started.headers.get('location')).toBe(`/api/v1/businesses/${ERASED}/erasure`);
    expect(started.body.data).toMatchObject({ business: ERASED });
    const done = await untilDone(ERASED);
    expect(done).toMatchObject({
      status: 'done',
      step: 'done',
      tasks_deleted: 7,
      tokens_revoked: 2,
      progress: { done: done.progress.total },
    });
    expect(done.facts_deleted).toBeGreaterThan(0);

    // ClickHouse: no table holds a row of it, rollups included.
    const chAfter = await clickhouseRows(ERASED);
    expect(Object.keys(chAfter)).toEqual(Object.keys(chBefore));
    expect(Object.values(chAfter).every((rows) => rows === 0)).toBe(true);
    // Postgres: no table names it but the erasure's own record.
    const pgAfter = await postgresRows(ERASED);
    expect(
      Object.entries(pgAfter).filter(([table, rows]) => rows > 0 && table !== 'business_erasures'),
    ).toEqual([]);
    expect(pgAfter.business_erasures).toBe(1);
    // The master key's sealed answer for the other business is still there.
    const masterKeys = await cairn.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('principal', '=', 'master')
      .execute();
    expect(masterKeys.map((row) => row.key)).toEqual(['token-kept']);

    // The other business answers exactly as before.
    expect(await answers(kept)).toEqual(before);

    // A token of only that business is refused; one of two keeps the other.
    expect(
      (await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers: cairn.auth })).status,
    ).toBe(401);
    const self = await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers: both });
    expect(self.body.data.businesses).toEqual([KEPT]);
    expect(
      (
        await http(cairn.url, 'POST', '/api/v1/query', {
          body: { metrics: ['tasks_created'], business: ERASED },
          headers: both,
        })
      ).status,
    ).toBe(404);
  }, 240_000);

  it('is idempotent: 202 again for an erased business, 404 for one that never existed', async () => {
    const again = await erase(ERASED);
    expect(again.status).toBe(202);
    expect(again.headers.get('location')).toBe(`/api/v1/businesses/${ERASED}/erasure`);
    expect(again.body.data.status).toBe('done');
    expect((await erase('never-was')).status).toBe(404);
    expect(
      (
        await http(cairn.url, 'GET', '/api/v1/businesses/never-was/erasure', {
          headers: cairn.master,
        })
      ).status,
    ).toBe(404);
    expect((await erase('not a name')).status).toBe(422);

    // No cached answer survives: a new token for the name is answered afresh, with nothing.
    const fresh = await cairn.token({ businesses: [ERASED] });
    const answer = await http(cairn.url, 'POST', '/api/v1/query', {
      body: CACHED_QUERY,
      headers: fresh,
    });
    expect(answer.body.metadata.cache).toBe('miss');
    expect(answer.body.data).toEqual([{ tasks_created: 0 }]);
  }, 60_000);

  it('scrubs what it can of the business, names no business in its logs, and keeps the other businesses’ cached answers', async () => {
    const business = 'eta-traces';
    const writer = await cairn.token({ businesses: [business, KEPT] });
    // Tokens named after the business: one left with no business, one revoked before, one
    // that keeps another business (and its name).
    const issue = async (name: string, businesses: string[]) => {
      const res = await http(cairn.url, 'POST', '/api/v1/tokens', {
        body: { name, scopes: ['analytics:read'], businesses },
        headers: cairn.master,
      });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const analyst = await issue(`${business} analyst (jane@victim.example)`, [business]);
    const former = await issue(`${business} former`, [business]);
    const shared = await issue('shared analyst', [business, KEPT]);
    expect(
      (await http(cairn.url, 'DELETE', `/api/v1/tokens/${former}`, { headers: cairn.master }))
        .status,
    ).toBe(204);
    await populate(business, writer, 6);
    await projected(business);

    // Answers kept for both businesses: each a hit once the projector holds still.
    const keptQuery = { metrics: ['tasks_created'], business: KEPT, period: 'all_time' };
    const erasedQuery = { metrics: ['tasks_created'], business, period: 'all_time' };
    const hit = (body: object, headers: Headers) =>
      waitFor(async () => {
        const res = await http(cairn.url, 'POST', '/api/v1/query', { body, headers });
        return res.body.metadata.cache === 'hit' ? res.body : undefined;
      });
    const keptBefore = await hit(keptQuery, writer);
    expect((await hit(erasedQuery, writer)).data).toEqual([{ tasks_created: 6 }]);

    const chDir = cairn.config.dataPaths.clickhouse;
    expect((await filesHolding(chDir, business)).length).toBeGreaterThan(0);
    const {
      rows: [pgBefore],
    } = await sql<{ at: Date; redo: string }>`
      select now() as at, redo_lsn::text as redo from pg_control_checkpoint()`.execute(cairn.db);

    const fromLine = logLines.length;
    expect((await erase(business)).status).toBe(202);
    await untilDone(business);
    const row = await findErasure(cairn.db, business);

    // Tokens: the business is gone from every list; a token left with none lost its name.
    const listed = await http(cairn.url, 'GET', '/api/v1/tokens?per_page=100', {
      headers: cairn.master,
    });
    const byId = new Map<string, { name: string; businesses: string[] }>(
      listed.body.data.map((token: { id: string }) => [token.id, token]),
    );
    expect(byId.get(analyst)).toMatchObject({ name: 'erased', businesses: [] });
    expect(byId.get(former)).toMatchObject({ name: 'erased', businesses: [] });
    expect(byId.get(shared)).toMatchObject({ name: 'shared analyst', businesses: [KEPT] });
    expect(JSON.stringify(listed.body.data)).not.toContain(business);
    await expectErased(business);

    // Postgres: the touched tables vacuumed, and a checkpoint after which the write-ahead log
    // holding the deleted rows can be recycled.
    const { rows: vacuumed } = await sql<{ table: string; vacuumed: boolean }>`
      select relname as table, coalesce(last_vacuum >= ${pgBefore?.at}, false) as vacuumed
      from pg_stat_user_tables
      where relname in ('tasks', 'task_dependencies', 'outbox', 'idempotency_keys',
        'api_tokens', 'projection_changes')
      order by relname`.execute(cairn.db);
    expect(vacuumed).toHaveLength(6);
    expect(vacuumed.filter((table) => !table.vacuumed)).toEqual([]);
    const {
      rows: [checkpoint],
    } = await sql<{ moved: boolean }>`
      select redo_lsn > ${pgBefore?.redo}::pg_lsn as moved
      from pg_control_checkpoint()`.execute(cairn.db);
    expect(checkpoint?.moved).toBe(true);

    // Embedded ClickHouse: no file under DATA_DIR/ch holds the name (the parts from before the
    // deletion are gone, and so are the finished mutations' commands).
    expect(await filesHolding(chDir, business)).toEqual([]);

    // The erasure's log lines name its id, never the business.
    const written = logLines.slice(fromLine);
    expect(written.filter((line) => line.includes(business))).toEqual([]);
    expect(
      written
        .map((line) => JSON.parse(line))
        .find((line) => line.msg === 'erasure: business erased'),
    ).toMatchObject({ erasure: row?.id });

    // The other business's answer is still kept: a hit, and the same.
    const keptAfter = await http(cairn.url, 'POST', '/api/v1/query', {
      body: keptQuery,
      headers: writer,
    });
    expect(keptAfter.body.metadata.cache).toBe('hit');
    expect(keptAfter.body.data).toEqual(keptBefore.data);
    if (cairn.config.redisUrl) {
      // Shared through Redis: no entry holds it, the other business's still do.
      const redis = new Redis(SERVER_REDIS_URL);
      try {
        const entries = await redis.keys(`${cairn.config.redisPrefix}:qcache:e:*`);
        const values = await Promise.all(entries.map((key) => redis.get(key)));
        expect(values.filter((value) => value?.includes(business))).toEqual([]);
        // Entries are filed under the businesses they read.
        const filed = (name: string) =>
          redis.scard(
            `${cairn.config.redisPrefix}:qcache:t:${createHash('sha256').update(name).digest('base64url')}`,
          );
        expect(await filed(business)).toBe(0);
        expect(await filed(KEPT)).toBeGreaterThan(0);
      } finally {
        redis.disconnect();
      }
    }
    // The erased business's is gone: a new token for the name is answered afresh.
    const again = await http(cairn.url, 'POST', '/api/v1/query', {
      body: erasedQuery,
      headers: await cairn.token({ businesses: [business] }),
    });
    expect(again.body.metadata.cache).toBe('miss');
    expect(again.body.data).toEqual([{ tasks_created: 0 }]);
  }, 240_000);

  it('lets no fact in flight bring the business back', async () => {
    const business = 'epsilon-flight';
    const writer = await cairn.token({ businesses: [business, KEPT] });
    await populate(business, writer, 6);
    // At once, before the projector has caught up.
    expect((await erase(business)).status).toBe(202);
    await untilDone(business);
    // The projector goes on past where the business's facts were, and still nothing of it.
    const marker = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: KEPT, name: 'after' },
      headers: kept,
    });
    expect(marker.status).toBe(201);
    await waitFor(
      async () => {
        const [row] = await (
          await ch().query({
            query: 'SELECT count() AS n FROM facts WHERE task_gid = {gid:String}',
            query_params: { gid: marker.body.data.gid },
            format: 'JSONEachRow',
          })
        ).json<{ n: number }>();
        return Number(row?.n) > 0;
      },
      { timeoutMs: 60_000 },
    );
    await expectErased(business);
  }, 180_000);

  it('while it runs, skips the business in every batch read and refuses its writes', async () => {
    const business = 'zeta-skip';
    const writer = await cairn.token({ businesses: [business, KEPT] });
    await populate(business, writer, 6);
    expect(await startErasure(erasure(), business)).toBe('started');
    // Whatever batch a projector fixes from now on, it reads none of the business's facts.
    const batch = await readBatch(
      cairn.db,
      { xid: '0', id: 0 },
      { xid: '9223372036854775807', id: Number.MAX_SAFE_INTEGER },
    );
    expect(batch.length).toBeGreaterThan(0);
    expect(batch.filter((row) => row.business === business)).toEqual([]);
    // A write that got past authentication before the mark cannot commit.
    const late = await cairn.db
      .insertInto('tasks')
      .values({ gid: 'zeta-late', business, name: 'late' })
      .execute()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(late).toMatchObject({ code: '40001' });
    // Answered as the token will be, on an instance that has not yet heard of the erasure.
    expect(classifyPostgresError(late)?.status).toBe(404);
    // Its token lost the business at once.
    const refused = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business, name: 'late' },
      headers: writer,
    });
    expect(refused.status).toBe(404);
    await runErasure(erasure(), business);
    await expectErased(business);
    // Once erased, the name is free again.
    await cairn.db.insertInto('tasks').values({ gid: 'zeta-new', business, name: 'new' }).execute();
    await cairn.db.deleteFrom('tasks').where('gid', '=', 'zeta-new').execute();
  }, 180_000);

  it('resumes an erasure interrupted between steps, from the step it was in', async () => {
    const business = 'gamma-crash';
    const writer = await cairn.token({ businesses: [business] });
    await populate(business, writer, 6);
    await projected(business);
    expect(await startErasure(erasure(), business)).toBe('started');
    const controller = new AbortController();
    await expect(
      runErasure(
        {
          ...erasure(),
          signal: controller.signal,
          onProgress: ({ done }) => {
            if (done === 3) controller.abort();
          },
        },
        business,
      ),
    ).rejects.toBeInstanceOf(ErasureAborted);
    const halfway = await findErasure(cairn.db, business);
    expect(halfway).toMatchObject({ status: 'running', step: 'idempotency' });
    // Tasks are gone, ClickHouse not yet cleared.
    expect((await clickhouseRows(business)).facts).toBeGreaterThan(0);
    // The token of only that business was revoked when the erasure started.
    expect((await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers: writer })).status).toBe(
      401,
    );

    const resumed = await erase(business);
    expect(resumed.status).toBe(202);
    expect(resumed.body.data.status).toBe('running');
    await untilDone(business);
    await expectErased(business);
  }, 180_000);

  it('erases from the CLI with a progress bar, and again harmlessly', async () => {
    const business = 'delta-cli';
    const writer = await cairn.token({ businesses: [business] });
    await populate(business, writer, 6);
    await projected(business);
    const cli = (...args: string[]) =>
      run(TSX, ['apps/cli/main.ts', 'businesses', 'erase', ...args], {
        env: {
          ...process.env,
          DATA_DIR: cairn.config.dataDir,
          DATABASE_URL: cairn.config.databaseUrl ?? '',
          REDIS_URL: cairn.config.redisUrl ?? '',
          CAIRN_MASTER_KEY: MASTER_KEY,
          LOG_LEVEL: 'silent',
        },
      });
    const first = await cli(business);
    expect(first.stdout).toMatch(
      /^Erased business delta-cli: 5 tasks, \d+ ClickHouse rows, 1 tokens revoked\.\n$/,
    );
    expect(first.stderr).toContain(`erase ${business} [`);
    expect(first.stderr).toContain('9/9 steps');
    await expectErased(business);
    expect((await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers: writer })).status).toBe(
      401,
    );

    const second = await cli(business);
    expect(second.stdout).toBe(first.stdout);
    await expect(cli('never-was')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Business never-was has no data and was never erased.'),
    });
  }, 180_000);
});

describe('erasing a business from the CLI with no server running', () => {
  it('erases straight on the engines, and a server started afterwards finds nothing of it', async () => {
    const setup = await testConfig({ CAIRN_MASTER_KEY: MASTER_KEY });
    try {
      const first = await startTestCairn({ config: setup.config, businesses: ['offline-gone'] });
      const kept = await first.token({ businesses: ['offline-kept'] });
      for (const [business, headers] of [
        ['offline-gone', first.auth],
        ['offline-kept', kept],
      ] as const) {
        for (let i = 0; i < 4; i++) {
          const res = await http(first.url, 'POST', '/api/v1/tasks', {
            body: { business, name: `t${i}`, project: 'p' },
            headers,
          });
          expect(res.status).toBe(201);
        }
      }
      await waitFor(
        async () => {
          const [row] = await (
            await first.engines.clickhouse.client.query({
              query: 'SELECT count() AS n FROM facts',
              format: 'JSONEachRow',
            })
          ).json<{ n: number }>();
          return Number(row?.n) === 8;
        },
        { timeoutMs: 60_000 },
      );
      const before = await http(first.url, 'POST', '/api/v1/query', {
        body: { metrics: ['tasks_created'], dimensions: ['project'], period: 'all_time' },
        headers: kept,
      });
      await first.close();

      const { stdout, stderr } = await run(
        TSX,
        ['apps/cli/main.ts', 'businesses', 'erase', 'offline-gone'],
        {
          env: {
            ...process.env,
            DATA_DIR: setup.config.dataDir,
            DATABASE_URL: setup.config.databaseUrl ?? '',
            REDIS_URL: setup.config.redisUrl ?? '',
            CAIRN_MASTER_KEY: MASTER_KEY,
            LOG_LEVEL: 'silent',
          },
        },
      );
      expect(stdout).toMatch(
        /^Erased business offline-gone: 4 tasks, \d+ ClickHouse rows, 1 tokens revoked\.\n$/,
      );
      expect(stderr).toContain('9/9 steps');

      const second = await startTestCairn({ config: setup.config, issueToken: false });
      try {
        const status = await http(second.url, 'GET', '/api/v1/businesses/offline-gone/erasure', {
          headers: second.master,
        });
        expect(status.body.data).toMatchObject({ status: 'done', tasks_deleted: 4 });
        const { rows } = await sql<{ n: string }>`
          select (select count(*) from tasks where business = ${'offline-gone'})
            + (select count(*) from outbox where business = ${'offline-gone'}) as n`.execute(
          second.db,
        );
        expect(Number(rows[0]?.n)).toBe(0);
        const [row] = await (
          await second.engines.clickhouse.client.query({
            query: 'SELECT count() AS n FROM facts WHERE business = {business:String}',
            query_params: { business: 'offline-gone' },
            format: 'JSONEachRow',
          })
        ).json<{ n: number }>();
        expect(Number(row?.n)).toBe(0);
        const after = await http(second.url, 'POST', '/api/v1/query', {
          body: { metrics: ['tasks_created'], dimensions: ['project'], period: 'all_time' },
          headers: kept,
        });
        expect(after.body.data).toEqual(before.body.data);
      } finally {
        await second.close();
      }
    } finally {
      await setup.cleanup();
    }
  }, 240_000);
});
