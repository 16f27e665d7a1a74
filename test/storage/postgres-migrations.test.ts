import fs from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../libs/storage/database.ts';
import { openPostgres } from '../../libs/storage/postgres.ts';
import {
  migratePostgres,
  POSTGRES_MIGRATIONS_DIR,
} from '../../libs/storage/postgres-migrations.ts';
import { createTestDatabase, type TestDatabase, tempDir } from '../support/engines.ts';

const expected = (await fs.readdir(POSTGRES_MIGRATIONS_DIR))
  .filter((f) => f.endsWith('.sql'))
  .sort();

// Each domain declares its own tables into `Database`; the type check refuses this list unless
// it names exactly the tables they declare, and the test compares it with what the files create.
const DECLARED: { [Table in keyof Database]: true } = {
  schema_migrations: true,
  idempotency_keys: true,
  idempotency_read_usage: true,
  tasks: true,
  task_dependencies: true,
  outbox: true,
  server_secrets: true,
  api_tokens: true,
  projector_checkpoints: true,
  business_erasures: true,
  outbox_retention: true,
  outbox_retention_marks: true,
  projection_changes: true,
  projector_leases: true,
  views: true,
  view_embeds: true,
};

describe('Postgres migrations on a server', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it('applies each file once, and a second run finds nothing to do', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const postgres = await openPostgres({ url: database.url });
    try {
      const first = await migratePostgres(postgres.db);
      expect(first.applied).toEqual(expected);
      const second = await migratePostgres(postgres.db);
      expect(second.applied).toEqual([]);
      expect(second.alreadyApplied).toEqual(first.applied);
      const tables = await sql<{ name: string }>`
        select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'
        order by table_name`.execute(postgres.db);
      expect(tables.rows.map((row) => row.name)).toEqual(Object.keys(DECLARED).sort());
    } finally {
      await postgres.close();
    }
  });

  it('lets two processes start at once: both succeed, every file is applied once', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const a = await openPostgres({ url: database.url });
    const b = await openPostgres({ url: database.url });
    try {
      const [ra, rb] = await Promise.all([migratePostgres(a.db), migratePostgres(b.db)]);
      const files = (await fs.readdir(POSTGRES_MIGRATIONS_DIR))
        .filter((f) => f.endsWith('.sql'))
        .sort();
      // One of them did everything, the other found it done: no file ran twice.
      expect([...ra.applied, ...rb.applied].sort()).toEqual(files);
      expect(ra.applied.length === 0 || rb.applied.length === 0).toBe(true);
      const rows = await a.db
        .selectFrom('schema_migrations')
        .select('name')
        .orderBy('name')
        .execute();
      expect(rows.map((row) => row.name)).toEqual(expected);
      expect(new Set(rows.map((row) => row.name)).size).toBe(rows.length);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('gives tasks and completion facts from before 0009 the labels each task was created with', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const before = await tempDir();
    for (const file of expected.filter((name) => name < '0009')) {
      await fs.copyFile(`${POSTGRES_MIGRATIONS_DIR}/${file}`, `${before}/${file}`);
    }
    const postgres = await openPostgres({ url: database.url });
    try {
      await migratePostgres(postgres.db, before);
      await sql`insert into tasks (gid, business, name, project, assignee, status)
        values ('old', 'acme', 'old', 'beta', 'bob', 'completed')`.execute(postgres.db);
      const fact = (kind: string, at: string, payload: Record<string, unknown>) =>
        sql`insert into outbox (kind, business, task_gid, payload, occurred_at)
          values (${kind}, 'acme', 'old', ${JSON.stringify(payload)}, ${at})`.execute(postgres.db);
      await fact('task_created', '2026-11-01T09:00:00Z', {
        project: 'alpha',
        assignee: null,
        status: 'open',
      });
      await fact('task_completed', '2026-11-02T09:00:00Z', {
        project: 'beta',
        status: 'completed',
      });
      await fact('task_completed', '2026-11-03T09:00:00Z', {
        project: 'beta',
        status: 'completed',
      });
      await fact('task_updated', '2026-11-03T09:00:00Z', { project: 'beta', status: 'completed' });

      expect((await migratePostgres(postgres.db)).applied).toEqual(
        expected.filter((name) => name >= '0009'),
      );
      const task = await sql`select created_project, created_assignee, created_status,
        first_completed_at from tasks`.execute(postgres.db);
      expect(task.rows).toEqual([
        {
          created_project: 'alpha',
          created_assignee: null,
          created_status: 'open',
          first_completed_at: new Date('2026-11-02T09:00:00Z'),
        },
      ]);
      const facts = await sql<{ kind: string; payload: Record<string, unknown> }>`
        select kind, payload from outbox order by id`.execute(postgres.db);
      expect(facts.rows.map((row) => row.payload)).toEqual([
        { project: 'alpha', assignee: null, status: 'open' },
        {
          project: 'beta',
          status: 'completed',
          created_project: 'alpha',
          created_assignee: null,
          created_status: 'open',
          first_completion: true,
          started_at: null,
        },
        {
          project: 'beta',
          status: 'completed',
          created_project: 'alpha',
          created_assignee: null,
          created_status: 'open',
          first_completion: false,
          started_at: null,
        },
        { project: 'beta', status: 'completed' },
      ]);
    } finally {
      await postgres.close();
    }
  });

  it('gives tasks and completion facts from before 0018 their first move to in_progress, and no known blocked time', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const before = await tempDir();
    for (const file of expected.filter((name) => name < '0018')) {
      await fs.copyFile(`${POSTGRES_MIGRATIONS_DIR}/${file}`, `${before}/${file}`);
    }
    const postgres = await openPostgres({ url: database.url });
    try {
      await migratePostgres(postgres.db, before);
      await sql`insert into tasks (gid, business, name, status) values
        ('worked', 'acme', 'worked', 'completed'), ('direct', 'acme', 'direct', 'completed')`.execute(
        postgres.db,
      );
      const fact = (gid: string, kind: string, at: string, status: string) =>
        sql`insert into outbox (kind, business, task_gid, payload, occurred_at)
          values (${kind}, 'acme', ${gid}, ${JSON.stringify({ status })}, ${at})`.execute(
          postgres.db,
        );
      // Completed once without working on it, then reopened, worked on twice and completed.
      await fact('worked', 'task_created', '2026-11-01T09:00:00Z', 'open');
      await fact('worked', 'task_completed', '2026-11-01T10:00:00Z', 'completed');
      await fact('worked', 'task_updated', '2026-11-01T11:00:00Z', 'in_progress');
      await fact('worked', 'task_updated', '2026-11-01T12:00:00Z', 'open');
      await fact('worked', 'task_updated', '2026-11-01T13:00:00Z', 'in_progress');
      await fact('worked', 'task_completed', '2026-11-02T09:30:00.250Z', 'completed');
      await fact('direct', 'task_created', '2026-11-01T09:00:00Z', 'completed');
      await fact('direct', 'task_completed', '2026-11-01T09:00:00Z', 'completed');

      expect((await migratePostgres(postgres.db)).applied).toEqual(
        expected.filter((name) => name >= '0018'),
      );
      // Their blocked spells were never recorded: no known blocked time.
      const tasks = await sql`select gid, started_at, blocked_ms, blocked_since from tasks
        order by gid`.execute(postgres.db);
      expect(tasks.rows).toEqual([
        { gid: 'direct', started_at: null, blocked_ms: null, blocked_since: null },
        {
          gid: 'worked',
          started_at: new Date('2026-11-01T11:00:00Z'),
          blocked_ms: null,
          blocked_since: null,
        },
      ]);
      const completions = await sql<{ task_gid: string; started_at: string | null }>`
        select task_gid, payload->'started_at' as started_at from outbox
        where kind = 'task_completed' order by id`.execute(postgres.db);
      expect(completions.rows).toEqual([
        { task_gid: 'worked', started_at: null },
        { task_gid: 'worked', started_at: '2026-11-01T11:00:00.000Z' },
        { task_gid: 'direct', started_at: null },
      ]);
    } finally {
      await postgres.close();
    }
  });

  it('rolls back a failing file completely', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const dir = await tempDir();
    await fs.writeFile(`${dir}/0001_ok.sql`, 'create table kept (id int);');
    await fs.writeFile(
      `${dir}/0002_broken.sql`,
      'create table half (id int); select nonsense from nowhere;',
    );
    const postgres = await openPostgres({ url: database.url });
    try {
      await expect(migratePostgres(postgres.db, dir)).rejects.toThrow();
      const tables = await sql<{ n: number }>`
        select count(*)::int as n from information_schema.tables
        where table_name in ('kept', 'half', 'schema_migrations')`.execute(postgres.db);
      expect(tables.rows[0]?.n).toBe(0);
    } finally {
      await postgres.close();
    }
  });
});

describe('Postgres migrations on PGlite', () => {
  it('applies the same files to a file-backed PGlite and keeps them across reopen', async () => {
    const dir = await tempDir();
    const first = await openPostgres({ dataDir: `${dir}/pg` });
    const report = await migratePostgres(first.db);
    expect(report.applied).toEqual(expected);
    await first.close();
    const second = await openPostgres({ dataDir: `${dir}/pg` });
    try {
      expect((await migratePostgres(second.db)).applied).toEqual([]);
      const count = await second.db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      expect(Number(count?.n)).toBe(0);
    } finally {
      await second.close();
    }
    // Two PGlite starts and a full migration: well over 30 s on a loaded 2-core machine.
  }, 120_000);
});
