// Figures for the task list's name search and the transitive dependents listing, each through
// HTTP beside the very statements the service sends (compiled from the same builders), sent
// straight to Postgres by a bare pg client in the same run.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../libs/storage/database.ts';
import { walkPageStatement } from '../libs/tasks/dependency.repository.ts';
import { MAX_WALK } from '../libs/tasks/dependency.service.ts';
import { encodeCursor } from '../libs/tasks/keyset-cursor.ts';
import { taskCollectionStatements } from '../libs/tasks/task-collection.repository.ts';
import type { Target } from './bench-target.ts';
import { sideBySide } from './side-by-side.ts';

const HEADER =
  'figure                       conc  service req/s  p50 ms  p99 ms  raw pg req/s  p50 ms  p99 ms  ratio  raw prepared  ratio';

export async function searchFigures(
  target: Target,
  db: Kysely<Database>,
  count: number,
): Promise<void> {
  const started = Date.now();
  await sql`insert into tasks (gid, business, name, created_at, updated_at)
    select 'search-' || i, 'search',
      (array['review', 'draft', 'ship', 'plan', 'test', 'fix', 'write'])[i % 7 + 1] || ' '
        || (array['budget', 'launch', 'report', 'design', 'invoice', 'roadmap', 'hiring',
                  'survey', 'release', 'contract', 'website'])[i % 11 + 1]
        || ' k' || lpad((i % 1000)::text, 3, '0') || ' ' || substr(md5(i::text), 1, 12),
      now() - make_interval(secs => i), now() - make_interval(secs => i)
    from generate_series(1, ${count}) as i`.execute(db);
  // What autovacuum does in time: index entries out of the pending list, fresh statistics.
  await sql`vacuum analyze tasks`.execute(db);
  await sql`checkpoint`.execute(db);
  console.log(
    `\nname search: ${count} tasks in business "search" (loaded and indexed in ${((Date.now() - started) / 1000).toFixed(0)} s); per_page=20, newest first; raw = the count and page statements`,
  );
  console.log(HEADER);
  const rare = (
    await sql<{
      q: string;
    }>`select substr(md5(${String(Math.floor(count / 3))}), 1, 8) as q`.execute(db)
  ).rows[0]!.q;
  for (const [label, q] of [
    ['q, 1 task', rare],
    ['q, 0.1 % of tasks', 'k042'],
    ['q, 1/7 of tasks', 'draft'],
  ] as const) {
    const query = {
      page: 1,
      per_page: 20,
      sort: 'created_at' as const,
      order: 'desc' as const,
      business: 'search',
      q,
    };
    const statements = taskCollectionStatements(db, query, {}, ['search']);
    await sideBySide(target, label, 8, `/api/v1/tasks?business=search&q=${encodeURIComponent(q)}`, [
      statements.count.compile(),
      statements.page.compile(),
    ]);
  }
}

/**
 * `depth=all` from the root of a `nodes`-task tree (ten children each): the first page and one
 * from the middle of the gid order, limit=100. Every page walks the whole reachable graph.
 */
export async function walkFigures(
  target: Target,
  db: Kysely<Database>,
  cursorKey: Buffer,
  nodes: number,
): Promise<void> {
  await sql`insert into tasks (gid, business, name)
    select 'walk-' || i, 'bench', 'walk ' || i from generate_series(0, ${nodes - 1}) as i`.execute(
    db,
  );
  await sql`insert into task_dependencies (task_gid, dependency_gid, business)
    select 'walk-' || i, 'walk-' || ((i - 1) / 10), 'bench'
    from generate_series(1, ${nodes - 1}) as i`.execute(db);
  await sql`vacuum analyze`.execute(db);
  await sql`checkpoint`.execute(db);
  const middleGid = (
    await sql<{ gid: string }>`select task_gid as gid from task_dependencies
      where task_gid like 'walk-%' order by task_gid collate "C"
      offset ${Math.floor(nodes / 2)} limit 1`.execute(db)
  ).rows[0]!.gid;
  console.log(
    `\ntransitive dependents (depth=all) of the root of a ${nodes}-task tree, ten children each: ${nodes - 1} reachable, limit=100; raw = the task lookup and the walk statement`,
  );
  console.log(HEADER);
  for (const [label, afterGid] of [
    ['depth=all, first page', ''],
    ['depth=all, middle page', middleGid],
  ] as const) {
    const offset = afterGid
      ? `&offset=${encodeURIComponent(encodeCursor(cursorKey, { listing: 'dependents:all', taskGid: 'walk-0', afterId: afterGid }))}`
      : '';
    const walk = walkPageStatement('dependents', 'walk-0', {
      afterGid,
      limit: 101,
      columns: [],
      statuses: undefined,
      maxReach: MAX_WALK,
    }).compile(db);
    const lookup = db.selectFrom('tasks').selectAll().where('gid', '=', 'walk-0').compile();
    // Each page walks the whole graph: two at a time already keep Postgres busy on a small box.
    for (const connections of [1, 2]) {
      await sideBySide(
        target,
        `${label}`,
        connections,
        `/api/v1/tasks/walk-0/dependents?depth=all&limit=100${offset}`,
        [lookup, walk],
      );
    }
  }
}
