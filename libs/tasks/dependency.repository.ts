import { sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { EdgeListing } from './keyset-cursor.ts';
import type { TaskRow } from './task.repository.ts';

export interface Edge {
  id: number;
  task_gid: string;
  dependency_gid: string;
}

/**
 * Serialises graph writes within one business until the transaction ends. Two requests that
 * would each add half of a cycle otherwise both pass their check on a snapshot without the
 * other's edge; under this lock the second one's check sees the first one's committed edge.
 */
export async function lockBusinessGraph(db: Db, business: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`cairn:graph:${business}`}, 0))`.execute(
    db,
  );
}

/** Adds `taskGid → each dependency`; edges already present stay as they are (same id, same order). */
export async function insertEdges(
  db: Db,
  business: string,
  taskGid: string,
  dependencyGids: readonly string[],
  createdAt: Date,
): Promise<Edge[]> {
  if (dependencyGids.length === 0) return [];
  return db
    .insertInto('task_dependencies')
    .values(
      dependencyGids.map((dependency_gid) => ({
        task_gid: taskGid,
        dependency_gid,
        business,
        created_at: createdAt,
      })),
    )
    .onConflict((oc) => oc.columns(['task_gid', 'dependency_gid']).doNothing())
    .returning(['id', 'task_gid', 'dependency_gid'])
    .execute();
}

export async function deleteEdge(
  db: Db,
  taskGid: string,
  dependencyGid: string,
): Promise<Edge | undefined> {
  return db
    .deleteFrom('task_dependencies')
    .where('task_gid', '=', taskGid)
    .where('dependency_gid', '=', dependencyGid)
    .returning(['id', 'task_gid', 'dependency_gid'])
    .executeTakeFirst();
}

/** Every edge touching the task, in either direction, removed. */
export async function deleteEdgesOf(db: Db, gid: string): Promise<Edge[]> {
  const edges = await db
    .deleteFrom('task_dependencies')
    .where((eb) => eb.or([eb('task_gid', '=', gid), eb('dependency_gid', '=', gid)]))
    .returning(['id', 'task_gid', 'dependency_gid'])
    .execute();
  return edges.sort((a, b) => a.id - b.id);
}

/** Task columns a listing may ask for beyond gid and name (the opt_fields whitelist). */
export type TaskColumn = Exclude<keyof TaskRow, 'gid' | 'name'>;

export type EdgePageRow = Pick<TaskRow, 'gid' | 'name'> & Partial<TaskRow> & { edge_id: number };

export interface EdgePage {
  /** The listed task's business, or undefined when the task does not exist. */
  business: string | undefined;
  rows: EdgePageRow[];
}

/**
 * One keyset page of a task's dependents (edges whose dependency is the task) or dependencies
 * (edges whose dependent is the task), in the order edges were added, together with the task's
 * business for the visibility check: one round trip. `id > afterId` on the (dependency_gid, id)
 * / (task_gid, id) index costs the same on page 1 and page 1,000. Only the columns asked for
 * are read, and they come from a closed list, never from the request text.
 */
export async function edgePage(
  db: Db,
  listing: EdgeListing,
  gid: string,
  page: { afterId: number; limit: number; columns: readonly TaskColumn[] },
): Promise<EdgePage> {
  const [anchor, other] =
    listing === 'dependents' ? ['dependency_gid', 'task_gid'] : ['task_gid', 'dependency_gid'];
  const columns = sql.join(
    ['gid', 'name', ...page.columns].map((column) => sql`t.${sql.ref(column)}`),
  );
  const { rows } = await sql<EdgePageRow & { root_business: string }>`
    select root.business as root_business, p.* from tasks root
    left join lateral (
      select ${columns}, e.id as edge_id from task_dependencies e
      join tasks t on t.gid = e.${sql.ref(other)}
      where e.${sql.ref(anchor)} = root.gid and e.id > ${page.afterId}
      order by e.id limit ${page.limit}
    ) p on true
    where root.gid = ${gid}`.execute(db);
  const business = rows[0]?.root_business;
  return {
    business,
    rows: rows
      .filter((row) => row.gid !== null)
      .map(({ root_business: _, ...row }) => row as EdgePageRow),
  };
}
