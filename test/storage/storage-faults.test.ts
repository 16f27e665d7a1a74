import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import express from 'express';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type PrivateServer, privatePostgres } from '../../dev-tools/private-servers.ts';
import { errorMiddleware } from '../../libs/http/error-middleware.ts';
import { createLogger } from '../../libs/observability/logger.ts';
import {
  classifyClickHouseError,
  clickHouseStorageFault,
} from '../../libs/storage/clickhouse-errors.ts';
import { classifyPostgresError } from '../../libs/storage/postgres-errors.ts';
import { type TestCairn, unlimited, useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';
import { type SmallDisk, useSmallDisk } from '../support/small-disk.ts';

/**
 * Storage that cannot take writes (full, read-only) under a running service: each write is a
 * 503 problem that names the fault, with Retry-After and nothing internal; /readyz is not ready
 * from the first such fault until writes work again; and once they do, writes succeed with no
 * half-written record left behind.
 */

const run = promisify(execFile);

/** What `statement` raised on a fresh session of the server at `url`. */
async function postgresError(
  url: string,
  statement: string,
  values: unknown[] = [],
): Promise<Error & { code?: string }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement, values);
  } catch (error) {
    return error as Error & { code?: string };
  } finally {
    await client.end().catch(() => {});
  }
  throw new Error(`no error from ${statement.slice(0, 80)}`);
}

const createTask = (cairn: TestCairn, business: string, name: string) =>
  http(cairn.url, 'POST', '/api/v1/tasks', { headers: cairn.auth, body: { business, name } });

const readyz = (cairn: TestCairn) => http(cairn.url, 'GET', '/readyz');

function expectFaultProblem(res: HttpResult, fault: 'storage-full' | 'storage-read-only') {
  expect(res.status, res.text).toBe(503);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  const body = res.body as Record<string, unknown>;
  expect(body.type).toBe(`urn:cairn:problem:${fault}`);
  expect(body.title).toBe(fault === 'storage-full' ? 'Storage Full' : 'Storage Read-Only');
  // Nothing internal: no file, no SQLSTATE, no statement.
  expect(res.text).not.toMatch(
    /base\/|could not|No space|53100|25006|INSERT|read-only transaction/,
  );
}

/** Every task has its creation fact and every fact its task: no write was half-done. */
async function expectNoHalfWrites(cairn: TestCairn, business: string) {
  const { rows } = await sql<{ orphan_tasks: number; orphan_facts: number }>`
    select
      (select count(*)::int from tasks t where t.business = ${business}
         and not exists (select 1 from outbox o where o.task_gid = t.gid)) as orphan_tasks,
      (select count(*)::int from outbox o where o.business = ${business}
         and not exists (select 1 from tasks t where t.gid = o.task_gid)) as orphan_facts
  `.execute(cairn.db);
  expect(rows[0]).toEqual({ orphan_tasks: 0, orphan_facts: 0 });
}

const tasksNamed = async (cairn: TestCairn, prefix: string) =>
  (
    await cairn.db.selectFrom('tasks').select('name').where('name', 'like', `${prefix}%`).execute()
  ).map((row) => row.name);

/**
 * Fills the disk under a warm service, writes until the writes fail, checks the answers and
 * readiness, frees the space and checks that writes and readiness come back on their own.
 */
async function diskFullCycle(cairn: TestCairn, disk: SmallDisk, business: string) {
  expect((await createTask(cairn, business, 'before the disk fills')).status).toBe(201);
  // chDB may be slow to answer its ping while the projector starts: ready first, then the fault.
  await waitFor(async () => (await readyz(cairn)).status === 200, { timeoutMs: 30_000 });

  await disk.fill();
  // A page with room left still takes a row: writes fail once a file has to grow.
  const written: string[] = [];
  let refused: HttpResult | undefined;
  for (let i = 0; i < 200 && !refused; i++) {
    const res = await createTask(cairn, business, `full-${i}`);
    if (res.status === 201) written.push(`full-${i}`);
    else refused = res;
  }
  expect(refused, 'no write failed on a full disk').toBeDefined();
  expectFaultProblem(refused as HttpResult, 'storage-full');
  for (let i = 0; i < 5; i++) {
    expectFaultProblem(await createTask(cairn, business, `refused-${i}`), 'storage-full');
  }

  const notReady = await readyz(cairn);
  expectFaultProblem(notReady, 'storage-full');
  expect((notReady.body as { checks: Record<string, string> }).checks.postgres_writes).toBe(
    'storage_full',
  );

  await disk.free();
  // No write needed: the readiness probe finds that Postgres writes again.
  await waitFor(async () => (await readyz(cairn)).status === 200, { timeoutMs: 30_000 });
  expect((await createTask(cairn, business, 'after the space returned')).status).toBe(201);
  expect(await tasksNamed(cairn, 'refused-')).toEqual([]);
  expect((await tasksNamed(cairn, 'full-')).sort()).toEqual(written.sort());
  await expectNoHalfWrites(cairn, business);
}

/** Writes refused while `readOnly` holds, then accepted once `writable` has run. */
async function readOnlyCycle(
  cairn: TestCairn,
  business: string,
  readOnly: () => Promise<void>,
  writable: () => Promise<void>,
) {
  expect((await createTask(cairn, business, 'before read-only')).status).toBe(201);
  await readOnly();
  try {
    // A reload reaches each session at its next statement.
    const refused = await waitFor(
      async () => {
        const res = await createTask(cairn, business, 'while read-only');
        return res.status !== 201 && res;
      },
      { timeoutMs: 30_000 },
    );
    expectFaultProblem(refused, 'storage-read-only');
    const notReady = await readyz(cairn);
    expectFaultProblem(notReady, 'storage-read-only');
    expect((notReady.body as { checks: Record<string, string> }).checks.postgres_writes).toBe(
      'storage_read_only',
    );
  } finally {
    await writable();
  }
  await waitFor(async () => (await readyz(cairn)).status === 200, { timeoutMs: 30_000 });
  expect((await createTask(cairn, business, 'writable again')).status).toBe(201);
  const tasks = await tasksNamed(cairn, 'while read-only');
  expect(tasks.length).toBeLessThanOrEqual(
    1, // the one that may have gone through before the reload reached its session
  );
  await expectNoHalfWrites(cairn, business);
}

describe('a Postgres server whose data directory is on a small tmpfs', () => {
  const disk = useSmallDisk('96m');
  /** Where a tablespace goes that a test remounts read-only. */
  const spare = useSmallDisk('16m');
  let postgres: PrivateServer;
  beforeAll(async () => {
    postgres = await privatePostgres({ parent: disk.dir });
    await run('chown', ['postgres', spare.dir]);
  }, 120_000);
  afterAll(async () => {
    await postgres?.stop();
  });
  const cairn = useCairn(() => ({
    env: { DATABASE_URL: postgres.url, REDIS_URL: '' },
    rateLimits: unlimited(),
    businesses: ['sf'],
  }));

  /** A session of the test's own that may write whatever the server's default says. */
  const admin = async (statements: string[]) => {
    const client = new pg.Client({
      connectionString: postgres.url,
      options: '-c default_transaction_read_only=off',
    });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };

  it('disk full: 503 storage-full with Retry-After and /readyz 503; space back: both recover, nothing half-written', async () => {
    await diskFullCycle(cairn, disk, 'sf');
  }, 120_000);

  it('read-only transactions (as on a hot standby): 503 storage-read-only and /readyz 503 until writable', async () => {
    await readOnlyCycle(
      cairn,
      'sf',
      () =>
        admin(['alter system set default_transaction_read_only = on', 'select pg_reload_conf()']),
      () => admin(['alter system reset default_transaction_read_only', 'select pg_reload_conf()']),
    );
  }, 120_000);

  it("EROFS (insufficient_privilege with the file system's words) is a 503 storage-read-only", async () => {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      await client.query(`create tablespace small location '${spare.dir}'`);
      await client.query('create table on_small (x text) tablespace small');
      await client.query(`insert into on_small values ('x')`);
      await client.query('checkpoint');
    } finally {
      await client.end();
    }
    // The checkpointer lets go of the file once it has written it: remount until it has.
    await waitFor(
      async () => {
        try {
          await run('mount', ['-o', 'remount,ro', spare.dir]);
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const error = await postgresError(postgres.url, `insert into on_small values ('y')`);
    expect(error.code).toBe('42501');
    expect(error.message).toContain('Read-only file system');
    const problem = classifyPostgresError(error);
    expect(problem?.code).toBe('storage_read_only');
    expect(problem?.status).toBe(503);
    expect(problem?.extra.headers?.['Retry-After']).toBeDefined();
    // A missing grant keeps its own SQLSTATE and is no storage fault.
    const denied = await postgresError(
      postgres.url,
      'set role pg_monitor; create table not_mine (x int)',
    );
    expect(denied.code).toBe('42501');
    expect(classifyPostgresError(denied)).toBeUndefined();
    await run('mount', ['-o', 'remount,rw', spare.dir]);
  }, 60_000);

  it('a protocol error (08P01, a statement binding 65,536 values) is a 500 that logs its cause', async () => {
    const values = Array.from({ length: 65_536 }, (_, i) => i);
    const placeholders = values.map((_, i) => `$${i + 1}::int`).join(',');
    const error = await postgresError(
      postgres.url,
      `select 1 where 0 = any(array[${placeholders}])`,
      values,
    );
    expect(error.code).toBe('08P01');
    expect(classifyPostgresError(error)).toBeUndefined();

    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => lines.push(line) });
    const app = express();
    app.get('/fails', () => {
      throw error;
    });
    app.use(errorMiddleware(logger, [classifyPostgresError]));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/fails`);
      expect(res.status).toBe(500);
      expect(res.headers.get('retry-after')).toBeNull();
      const text = await res.text();
      expect(text).not.toMatch(/bind message|08P01/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(lines.join('')).toMatch(/08P01/);
    expect(lines.join('')).toMatch(/bind message/);
  }, 60_000);

  it('a lost or refused connection is still a 503 unavailable', async () => {
    const client = new pg.Client({ connectionString: postgres.url });
    client.on('error', () => {});
    await client.connect();
    const killer = new pg.Client({ connectionString: postgres.url });
    await killer.connect();
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    await killer.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
    await killer.end();
    const terminated = await client.query('select 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(classifyPostgresError(terminated)?.code).toBe('unavailable');
    await client.end().catch(() => {});

    const refused = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/x`,
    });
    const error = await refused.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as { code?: string }).code).toBe('ECONNREFUSED');
    expect(classifyPostgresError(error)?.code).toBe('unavailable');
  }, 60_000);
});

describe('the SQLSTATE and ClickHouse mappings', () => {
  const pgCode = (code: string, message = 'x') => classifyPostgresError({ code, message })?.code;

  it('class 08 is unavailable only for real connection failures', () => {
    for (const code of ['08000', '08003', '08006', '08001', '08004']) {
      expect(pgCode(code), code).toBe('unavailable');
    }
    for (const code of ['08P01', '08007']) {
      expect(pgCode(code), code).toBeUndefined();
    }
  });

  it("disk full, out of memory and read-only are storage faults; PGlite's file-system errors too", () => {
    expect(pgCode('53100')).toBe('storage_full');
    expect(pgCode('53200')).toBe('out_of_memory');
    expect(pgCode('25006')).toBe('storage_read_only');
    expect(pgCode('XX000', 'could not write init file')).toBe('storage_full');
    // PGlite's Emscripten file system: ErrnoError with its own errno numbers.
    expect(classifyPostgresError({ name: 'ErrnoError', errno: 51 })?.code).toBe('storage_full');
    expect(classifyPostgresError({ name: 'ErrnoError', errno: 69 })?.code).toBe(
      'storage_read_only',
    );
    expect(classifyPostgresError({ code: 'ENOSPC', message: 'write' })?.code).toBe('storage_full');
    expect(classifyPostgresError({ code: 'EROFS', message: 'open' })?.code).toBe(
      'storage_read_only',
    );
  });

  it('ClickHouse: the whole server out of memory is a 503, the per-query cap is not', () => {
    const ch = (type: string, message: string) => ({ type, code: '0', message });
    expect(
      clickHouseStorageFault(
        ch(
          'MEMORY_LIMIT_EXCEEDED',
          'Memory limit (for query) exceeded: would use 9.54 MiB (attempt to allocate chunk of 4.00 MiB bytes), maximum: 9.54 MiB.',
        ),
      ),
    ).toBeUndefined();
    // What chDB 3 says when a query passes its max_memory_usage.
    expect(
      clickHouseStorageFault(
        ch(
          'MEMORY_LIMIT_EXCEEDED',
          'Code: 241. DB::Exception: Query memory limit exceeded: would use 12.10 MiB (attempt to allocate chunk of 8.00 MiB), maximum: 7.63 MiB. (MEMORY_LIMIT_EXCEEDED)',
        ),
      ),
    ).toBeUndefined();
    for (const message of [
      'Memory limit (total) exceeded: would use 3.50 GiB, maximum: 3.46 GiB.',
      'Memory limit (for user) exceeded: would use 3.50 GiB, maximum: 3.46 GiB.',
      '(total) memory limit exceeded: would use 3.50 GiB, current RSS: 3.4 GiB, maximum: 3.46 GiB.',
      'Global memory limit exceeded: would use 3.50 GiB, maximum: 3.46 GiB.',
    ]) {
      expect(clickHouseStorageFault(ch('MEMORY_LIMIT_EXCEEDED', message)), message).toBe(
        'out_of_memory',
      );
    }
    expect(clickHouseStorageFault(ch('CANNOT_ALLOCATE_MEMORY', 'Cannot mmap'))).toBe(
      'out_of_memory',
    );
    expect(clickHouseStorageFault(ch('NOT_ENOUGH_SPACE', 'Cannot reserve 1.00 MiB'))).toBe(
      'storage_full',
    );
    expect(
      clickHouseStorageFault(
        ch(
          'CANNOT_WRITE_TO_FILE_DESCRIPTOR',
          'Cannot write to file /ch/data/x.bin, errno: 28, strerror: No space left on device',
        ),
      ),
    ).toBe('storage_full');
    expect(
      clickHouseStorageFault(
        ch(
          'CANNOT_OPEN_FILE',
          'Cannot open file /ch/x.bin, errno: 30, strerror: Read-only file system',
        ),
      ),
    ).toBe('storage_read_only');
    expect(clickHouseStorageFault(ch('TABLE_IS_READ_ONLY', 'Table is in readonly mode'))).toBe(
      'storage_read_only',
    );
    const problem = classifyClickHouseError(ch('NOT_ENOUGH_SPACE', 'Cannot reserve 1.00 MiB'));
    expect(problem?.status).toBe(503);
    expect(problem?.detail).not.toMatch(/reserve|MiB/);
    expect(classifyClickHouseError(ch('UNKNOWN_TABLE', 'Table x does not exist'))).toBeUndefined();
  });
});

describe('PGlite with its files on a small tmpfs', () => {
  const disk = useSmallDisk('96m', 'pg');
  const cairn = useCairn(() => ({
    servers: false,
    env: { DATA_DIR: disk.root },
    rateLimits: unlimited(),
    businesses: ['sf'],
  }));

  it('disk full: 503 storage-full with Retry-After and /readyz 503; space back: both recover, nothing half-written', async () => {
    await diskFullCycle(cairn, disk, 'sf');
  }, 120_000);

  it('read-only transactions: 503 storage-read-only and /readyz 503 until writable', async () => {
    // PGlite is one session: what it is told holds for every write the service makes.
    await readOnlyCycle(
      cairn,
      'sf',
      async () => {
        await sql`set default_transaction_read_only = on`.execute(cairn.db);
      },
      async () => {
        await sql`set default_transaction_read_only = off`.execute(cairn.db);
      },
    );
  }, 120_000);
});
