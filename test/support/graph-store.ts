import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import type { DependencyDeps } from '../../libs/tasks/dependency.service.ts';
import { createTestDatabase, migratedPglite, tempDir } from './engines.ts';

/**
 * A migrated task store of the kind named (a database of its own on the machine's Postgres, or
 * a PGlite directory) and the dependency service's deps over it, for tests that run the same
 * graph scenarios on both.
 */
export async function openGraphStore(
  engine: 'postgres' | 'pglite',
  options: { poolSize: number; cursorKeyByte: number },
): Promise<{ pg: Postgres; deps: DependencyDeps; close: () => Promise<void> }> {
  const database = engine === 'postgres' ? await createTestDatabase() : undefined;
  const pg = database
    ? await openPostgres({ url: database.url, poolSize: options.poolSize })
    : await openPostgres({ dataDir: await migratedPglite(`${await tempDir()}/pg`) });
  await migratePostgres(pg.db);
  const deps: DependencyDeps = {
    db: pg.db,
    now: () => new Date(),
    wakeProjector: () => {},
    cursorKey: Buffer.alloc(32, options.cursorKeyByte),
  };
  return {
    pg,
    deps,
    close: async () => {
      await pg.close();
      await database?.drop();
    },
  };
}
