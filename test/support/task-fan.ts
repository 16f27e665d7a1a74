import { sql } from 'kysely';
import type { Db } from '../../libs/storage/database.ts';

/**
 * `<prefix>-0` and `count` more tasks `<prefix>-1…`, each linked to `<prefix>-0`: as its
 * dependents (`waiting: 'on-hub'`) or as its dependencies (`'hub-waits'`), written straight to
 * the tables in slabs. For bounds tests: write it before the first request, since embedded
 * Postgres runs on the server's thread and a long stall between requests lets the server drop a
 * kept-alive connection just as the client reuses it.
 */
export async function insertFan(
  db: Db,
  options: { prefix: string; count: number; waiting: 'on-hub' | 'hub-waits'; business?: string },
): Promise<void> {
  const { prefix, count, business = 'acme' } = options;
  const hub = `${prefix}-0`;
  await sql`insert into tasks (gid, business, name) values (${hub}, ${business}, ${prefix})`.execute(
    db,
  );
  for (let from = 1; from <= count; from += 10_000) {
    const to = Math.min(from + 9_999, count);
    await sql`insert into tasks (gid, business, name)
      select ${prefix} || '-' || i, ${business}, ${prefix} || ' ' || i
      from generate_series(${from}::int, ${to}::int) as i`.execute(db);
    const other = sql`${prefix} || '-' || i`;
    const [task, dependency] =
      options.waiting === 'on-hub' ? [other, sql`${hub}`] : [sql`${hub}`, other];
    await sql`insert into task_dependencies (task_gid, dependency_gid, business)
      select ${task}, ${dependency}, ${business}
      from generate_series(${from}::int, ${to}::int) as i`.execute(db);
  }
}
