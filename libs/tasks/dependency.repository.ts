import { type RawBuilder, sql } from 'kysely';
import { compiledShapes } from '../storage/compiled-shapes.ts';
import type { Db } from '../storage/database.ts';
import type { EdgeListing } from './keyset-cursor.ts';
import type { TaskRow } from './task.repository.ts';
import type { TaskStatus } from './task-status.ts';

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

/** `t.gid, t.name` (or `p.…`) and the columns asked for, from the closed list, never from request text. */
function taskColumns(columns: readonly TaskColumn[], table: 't' | 'p' = 't') {
  return sql.join(
    ['gid', 'name', ...columns].map((column) => sql`${sql.raw(table)}.${sql.ref(column)}`),
  );
}

export type EdgePageRow = Pick<TaskRow, 'gid' | 'name'> & Partial<TaskRow> & { edge_id: number };

export interface EdgePage {
  /** The listed task's business, or undefined when the task does not exist. */
  business: string | undefined;
  rows: EdgePageRow[];
}

export interface EdgePageRequest {
  afterId: number;
  limit: number;
  columns: readonly TaskColumn[];
  statuses?: readonly TaskStatus[] | undefined;
  /** Businesses the caller may read (null: all). A task outside them is never paged. */
  businesses: readonly string[] | null;
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
  page: EdgePageRequest,
): Promise<EdgePage> {
  const { rows } = await db.executeQuery(compiledEdgePage({ db, listing, gid, page }));
  const business = rows[0]?.root_business;
  // A task without edges still comes back as one row of nulls (the left join). The rows keep
  // root_business: copying a hundred rows to drop it cost more than the views that read them.
  return { business, rows: rows[0]?.gid === null ? [] : rows };
}

interface EdgePageInput {
  db: Db;
  listing: EdgeListing;
  gid: string;
  page: EdgePageRequest;
}

/** The page statement, built and compiled once per listing, column list and filter. */
const compiledEdgePage = compiledShapes<EdgePageInput, EdgePageRow & { root_business: string }>({
  shape: ({ listing, page }) =>
    `${listing}|${page.columns.join(',')}|${page.statuses?.length}|${page.businesses === null}`,
  compile: ({ db, listing, gid, page }) => edgePageStatement(listing, gid, page).compile(db),
  values: ({ gid, page }) => [
    page.afterId,
    ...(page.statuses ?? []),
    page.limit,
    gid,
    ...(page.businesses === null ? [] : [[...page.businesses]]),
  ],
});

/**
 * The statement behind `edgePage`. Its select list names every column (no `p.*`), so it runs
 * as a prepared statement (see libs/storage/postgres.ts).
 */
export function edgePageStatement(listing: EdgeListing, gid: string, page: EdgePageRequest) {
  const [anchor, other] =
    listing === 'dependents' ? ['dependency_gid', 'task_gid'] : ['task_gid', 'dependency_gid'];
  return sql<EdgePageRow & { root_business: string }>`
    select root.business as root_business, ${taskColumns(page.columns, 'p')}, p.edge_id
    from tasks root
    left join lateral (
      select ${taskColumns(page.columns)}, e.id as edge_id from task_dependencies e
      join tasks t on t.gid = e.${sql.ref(other)}
      where e.${sql.ref(anchor)} = root.gid and e.id > ${page.afterId}
        ${statusCondition(page.statuses)}
      order by e.id limit ${page.limit}
    ) p on true
    where root.gid = ${gid}${
      page.businesses === null ? sql`` : sql` and root.business = any(${[...page.businesses]})`
    }`;
}

export type WalkPageRow = Pick<TaskRow, 'gid' | 'name'> & Partial<TaskRow> & { depth: number };

export interface WalkPage {
  /** Task-depth pairs the walk reached, counted up to `maxReach + 1`. */
  reached: number;
  rows: WalkPageRow[];
}

/** `and t.status in (…)` when the listing is filtered by status. */
function statusCondition(statuses: readonly TaskStatus[] | undefined) {
  return statuses === undefined ? sql`` : sql`and t.status in (${sql.join(statuses)})`;
}

/**
 * One page of every task reachable from `gid` through dependents (or dependencies) edges, at
 * any depth, each with its shortest distance, in gid order after `afterGid`. Gid order, not
 * depth order, because a task's depth can change between pages while its gid cannot: every
 * task reachable for the whole walk is listed exactly once.
 *
 * The walk runs in the database as a recursive query; `union` keeps each (task, depth) once,
 * which makes it linear in a tree and bounded in any DAG (edges never form a cycle). It stops
 * after `maxReach + 1` pairs, which the caller turns into a 4xx: a huge graph costs a bounded
 * amount of work, never a timeout. `status` filters the tasks listed, not those walked through.
 */
export function walkPageStatement(
  listing: EdgeListing,
  gid: string,
  page: {
    afterGid: string;
    limit: number;
    columns: readonly TaskColumn[];
    statuses: readonly TaskStatus[] | undefined;
    maxReach: number;
  },
): RawBuilder<WalkPageRow & { reached: number }> {
  const [anchor, other] =
    listing === 'dependents' ? ['dependency_gid', 'task_gid'] : ['task_gid', 'dependency_gid'];
  const columns = taskColumns(page.columns);
  // gids compare bytewise ("C"), the same on every database whatever its default collation.
  return sql<WalkPageRow & { reached: number }>`
    with recursive walk(gid, depth) as (
      select e.${sql.ref(other)}, 1 from task_dependencies e where e.${sql.ref(anchor)} = ${gid}
      union
      select e.${sql.ref(other)}, w.depth + 1 from walk w
      join task_dependencies e on e.${sql.ref(anchor)} = w.gid
    ),
    bounded as (select gid, depth from walk limit ${page.maxReach + 1}),
    reach as (select gid, min(depth) as depth from bounded group by gid)
    select (select count(*) from bounded)::int as reached, p.*
    from (select 1) one
    left join lateral (
      select ${columns}, r.depth from reach r
      join tasks t on t.gid = r.gid
      where r.gid collate "C" > ${page.afterGid} ${statusCondition(page.statuses)}
      order by r.gid collate "C" limit ${page.limit}
    ) p on true`;
}

/** Runs `walkPageStatement`: one page of a transitive listing and how far the walk reached. */
export async function walkPage(
  db: Db,
  listing: EdgeListing,
  gid: string,
  page: Parameters<typeof walkPageStatement>[2],
): Promise<WalkPage> {
  const { rows } = await walkPageStatement(listing, gid, page).execute(db);
  return {
    reached: rows[0]?.reached ?? 0,
    rows: rows
      .filter((row) => row.gid !== null)
      .map(({ reached: _, ...row }) => row as WalkPageRow),
  };
}
