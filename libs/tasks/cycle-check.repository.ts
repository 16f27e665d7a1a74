import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../storage/database.ts';

/**
 * Would making `taskGid` depend on each of `dependencyGids` close a cycle? Only if the task is
 * already reachable from one of them along "depends on" edges: every new edge leaves `taskGid`,
 * so a cycle through two new edges would pass `taskGid` first. Returns the cycle as a path
 * `[taskGid, dependency, …, taskGid]`, or null.
 *
 * The walk is a recursive CTE with UNION, which drops rows already produced: each task is
 * visited once, so a chain 10,000 deep is 10,000 index probes, with no recursion limit and no
 * path arrays growing with depth. Postgres evaluates the CTE only as far as the outer LIMIT
 * needs, so the walk stops at the first hit.
 */
export async function findCycle(
  db: Db,
  taskGid: string,
  dependencyGids: readonly string[],
): Promise<string[] | null> {
  if (dependencyGids.length === 0) return null;
  const starts = sql.join(dependencyGids.map((gid) => sql`(${gid}::text)`));
  const hit = await sql<{ found: number }>`
    with recursive reach(gid) as (
      select v.gid from (values ${starts}) as v(gid)
      union
      select step.gid from reach r cross join lateral (${stepsFrom(sql`r.gid`, 'forward')}) step
    )
    select 1 as found from reach where gid = ${taskGid} limit 1`.execute(db);
  if (hit.rows.length === 0) return null;
  return cyclePath(db, taskGid, dependencyGids);
}

/**
 * One step along the edges from `gid`, as its own subquery. The planner sizes the recursive
 * working table blindly and, on a table with stale statistics, picks a hash join that scans
 * every edge once per level: 10,000 levels took over a minute. A lateral subquery kept apart by
 * `offset 0` can only be a nested loop, one index probe per visited task.
 */
function stepsFrom(gid: RawBuilder<unknown>, direction: 'forward' | 'backward') {
  return direction === 'forward'
    ? sql`select e.dependency_gid as gid from task_dependencies e where e.task_gid = ${gid} offset 0`
    : sql`select e.task_gid as gid from task_dependencies e where e.dependency_gid = ${gid} offset 0`;
}

/**
 * The shortest path naming the cycle, for the 409. Only the edges lying on some path from a
 * dependency back to the task matter: those between tasks reachable from the dependencies that
 * also reach the task. A breadth-first search over them in memory finds the shortest one.
 */
async function cyclePath(
  db: Db,
  taskGid: string,
  dependencyGids: readonly string[],
): Promise<string[]> {
  const starts = sql.join(dependencyGids.map((gid) => sql`(${gid}::text)`));
  const { rows } = await sql<{ task_gid: string; dependency_gid: string }>`
    with recursive forward(gid) as (
      select v.gid from (values ${starts}) as v(gid)
      union
      select step.gid from forward f cross join lateral (${stepsFrom(sql`f.gid`, 'forward')}) step
    ), backward(gid) as (
      select ${taskGid}::text
      union
      select step.gid from backward b cross join lateral (${stepsFrom(sql`b.gid`, 'backward')}) step
    ), onpath as (
      select gid from forward intersect select gid from backward
    )
    select e.task_gid, e.dependency_gid from task_dependencies e
    where e.task_gid in (select gid from onpath) and e.dependency_gid in (select gid from onpath)
    order by e.id`.execute(db);
  const next = new Map<string, string[]>();
  for (const row of rows) {
    const list = next.get(row.task_gid) ?? [];
    list.push(row.dependency_gid);
    next.set(row.task_gid, list);
  }
  const parent = new Map<string, string>();
  const queue: string[] = [];
  for (const gid of dependencyGids) {
    if (parent.has(gid)) continue;
    parent.set(gid, taskGid);
    queue.push(gid);
  }
  for (let i = 0; i < queue.length; i++) {
    const gid = queue[i] as string;
    if (gid === taskGid) break;
    for (const child of next.get(gid) ?? []) {
      if (parent.has(child)) continue;
      parent.set(child, gid);
      queue.push(child);
    }
  }
  // Walk the parents back from the task to where the new edge would start.
  const path = [taskGid];
  for (let at = parent.get(taskGid); at !== undefined && at !== taskGid; at = parent.get(at)) {
    path.push(at);
  }
  path.push(taskGid);
  return path.reverse();
}
