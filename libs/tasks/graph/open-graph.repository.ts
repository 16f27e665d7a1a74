import { sql } from 'kysely';
import type { Db } from '../../storage/database.ts';
import { OPEN_STATUSES } from '../task-status.ts';

/**
 * A graph of open tasks as the graph reads load it: gids, when each was created (ms, for
 * tie-breaks), and edges as gid pairs (`edges[2k]` waits on `edges[2k+1]`). Each list travels
 * as one aggregated text rather than a row per task or edge: at 100,000 tasks and 300,000 edges
 * that is the difference between a tenth of a second and seconds of row decoding
 * (docs/benchmarks.md, "graph"). Gids hold no comma (their pattern has none).
 */
export interface LoadedGraph {
  gids: string[];
  created: Float64Array;
  edges: string[];
}

/** A task as the graph reads list it. */
export interface GraphTaskRow {
  gid: string;
  name: string;
  status: string;
  due_on: string | null;
}

const openStatus = (alias: string) =>
  sql`${sql.ref(`${alias}.status`)} in (${sql.join([...OPEN_STATUSES])})`;

const split = (text: string | null): string[] => (text ? text.split(',') : []);

function loaded(
  row: { gids: string | null; created: string | null } | undefined,
  edges: string | null,
): LoadedGraph {
  return {
    gids: split(row?.gids ?? null),
    created: Float64Array.from(split(row?.created ?? null), Number),
    edges: split(edges),
  };
}

/**
 * Every open task of a business, and every edge of the business (the caller keeps those between
 * two open tasks), with which tasks are in `project` when one is named: two statements, the
 * aggregates of each over the same rows in the same order.
 *
 * ```sql
 * select string_agg(gid, ','), string_agg(<created ms>, ','), string_agg(<in project: 1|0>, '')
 *   from tasks where business = $1 and status in ('open', 'in_progress')
 * select string_agg(task_gid || ',' || dependency_gid, ',') from task_dependencies where business = $1
 * ```
 */
export async function openGraph(
  db: Db,
  business: string,
  project: string | undefined,
): Promise<LoadedGraph & { inProject: string }> {
  const tasks = await sql<{
    gids: string | null;
    created: string | null;
    in_project: string | null;
  }>`
    select string_agg(t.gid, ',') as gids,
      string_agg(floor(extract(epoch from t.created_at) * 1000)::bigint::text, ',') as created,
      string_agg(case when t.project = ${project ?? null}::text then '1' else '0' end, '') as in_project
    from tasks t where t.business = ${business} and ${openStatus('t')}`.execute(db);
  const edges = await sql<{ edges: string | null }>`
    select string_agg(e.task_gid || ',' || e.dependency_gid, ',') as edges
    from task_dependencies e where e.business = ${business}`.execute(db);
  const row = tasks.rows[0];
  return { ...loaded(row, edges.rows[0]?.edges ?? null), inProject: row?.in_project ?? '' };
}

/**
 * The open tasks `gid` waits on at any depth (walking only through open tasks: a closed
 * dependency no longer holds anything up) and the edges among them and from `gid`, in one
 * statement. The walk stops after `maxReach + 1` tasks, so that a huge graph costs a bounded
 * amount of work; `union` keeps each task once, so it is linear in the tasks it reaches.
 */
export async function openDependencyWalk(
  db: Db,
  gid: string,
  maxReach: number,
): Promise<LoadedGraph> {
  const { rows } = await sql<{ gids: string | null; created: string | null; edges: string | null }>`
    with recursive reach(gid) as (
      select e.dependency_gid from task_dependencies e
      join tasks t on t.gid = e.dependency_gid and ${openStatus('t')}
      where e.task_gid = ${gid}
      union
      select e.dependency_gid from reach r
      join task_dependencies e on e.task_gid = r.gid
      join tasks t on t.gid = e.dependency_gid and ${openStatus('t')}
    ),
    bounded as materialized (select gid from reach limit ${maxReach + 1}),
    found as (
      select string_agg(t.gid, ',') as gids,
        string_agg(floor(extract(epoch from t.created_at) * 1000)::bigint::text, ',') as created
      from bounded b join tasks t on t.gid = b.gid
    )
    select found.gids, found.created, (
      select string_agg(e.task_gid || ',' || e.dependency_gid, ',')
      from bounded b join task_dependencies e on e.dependency_gid = b.gid
      where e.task_gid = ${gid} or e.task_gid in (select gid from bounded)
    ) as edges
    from found`.execute(db);
  const row = rows[0];
  return loaded(row, row?.edges ?? null);
}

/** The listed tasks' members for display, by gid. */
export async function graphTasks(
  db: Db,
  gids: readonly string[],
): Promise<Map<string, GraphTaskRow>> {
  if (gids.length === 0) return new Map();
  const rows = await db
    .selectFrom('tasks')
    .select(['gid', 'name', 'status', 'due_on'])
    .where('gid', 'in', [...gids])
    .execute();
  return new Map(rows.map((row) => [row.gid, row]));
}
