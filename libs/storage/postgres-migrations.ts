import fs from 'node:fs/promises';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import type { Database } from './database.ts';

export const POSTGRES_MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../sql/postgres');

/** Any constant works; it only has to be the same in every Cairn process. */
const MIGRATION_LOCK_KEY = 0x0ca1_2e50;

export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
}

/**
 * Applies `sql/postgres/NNNN_*.sql` in name order, each once, recorded in `schema_migrations`.
 * Everything runs in one transaction under an advisory lock, so two processes starting together
 * take turns and the second finds nothing left to do; a failing file leaves no trace.
 */
export async function migratePostgres(
  db: Kysely<Database>,
  dir = POSTGRES_MIGRATIONS_DIR,
): Promise<MigrationReport> {
  const files = (await fs.readdir(dir)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
    await sql`create table if not exists schema_migrations (
      name text primary key,
      applied_at timestamptz not null default now()
    )`.execute(trx);
    const done = new Set(
      (await trx.selectFrom('schema_migrations').select('name').execute()).map((row) => row.name),
    );
    const report: MigrationReport = { applied: [], alreadyApplied: [] };
    for (const file of files) {
      if (done.has(file)) {
        report.alreadyApplied.push(file);
        continue;
      }
      const text = await fs.readFile(path.join(dir, file), 'utf8');
      await sql.raw(text).execute(trx);
      await trx.insertInto('schema_migrations').values({ name: file }).execute();
      report.applied.push(file);
    }
    return report;
  });
}
