import { businessScope, visibleOrNotFound } from '../../auth/access.ts';
import { allowedBusinesses, type Principal } from '../../auth/principal.ts';
import type { Db } from '../../storage/database.ts';
import { MAX_WALK } from '../dependency.service.ts';
import { findTask } from '../task.repository.ts';
import { GraphTooLarge } from '../task-errors.ts';
import { topBlockers, waiterGraph } from './blocked-counts.ts';
import { longestChain } from './longest-chain.ts';
import {
  type GraphTaskRow,
  graphTasks,
  type LoadedGraph,
  openDependencyWalk,
  openGraph,
} from './open-graph.repository.ts';

export interface GraphReadDeps {
  db: Db;
  now: () => Date;
}

export interface TaskOnGraph {
  gid: string;
  resource_type: 'task';
  name: string;
  status: string;
  due_on: string | null;
  overdue: boolean;
}

const QUERY_CANCELED = '57014';

/** Node indices of a loaded graph, its edges as index pairs, and the tie-break between nodes. */
interface IndexedGraph {
  gids: string[];
  waiter: Int32Array;
  dependency: Int32Array;
  /** Earliest created first, then gid (bytewise). */
  before: (a: number, b: number) => number;
}

/** Keeps only the edges whose ends are both among the graph's tasks (both open). */
function indexed(graph: LoadedGraph): IndexedGraph {
  const { gids, created, edges } = graph;
  const index = new Map(gids.map((gid, i) => [gid, i]));
  const waiter = new Int32Array(edges.length >> 1);
  const dependency = new Int32Array(edges.length >> 1);
  let kept = 0;
  for (let at = 0; at + 1 < edges.length; at += 2) {
    const w = index.get(edges[at] ?? '');
    const d = index.get(edges[at + 1] ?? '');
    if (w === undefined || d === undefined) continue;
    waiter[kept] = w;
    dependency[kept++] = d;
  }
  const before = (a: number, b: number) => {
    const x = gids[a] ?? '';
    const y = gids[b] ?? '';
    return (created[a] ?? 0) - (created[b] ?? 0) || (x < y ? -1 : x > y ? 1 : 0);
  };
  return {
    gids,
    waiter: waiter.subarray(0, kept),
    dependency: dependency.subarray(0, kept),
    before,
  };
}

/** The listed tasks for display, in order; overdue when due before today (UTC). */
async function onGraph(deps: GraphReadDeps, gids: readonly string[]): Promise<TaskOnGraph[]> {
  const rows = await graphTasks(deps.db, gids);
  const today = deps.now().toISOString().slice(0, 10);
  return gids.flatMap((gid) => {
    const row: GraphTaskRow | undefined = rows.get(gid);
    // Deleted since the graph was read: no longer anything to list.
    if (!row) return [];
    return [
      {
        gid,
        resource_type: 'task' as const,
        name: row.name,
        status: row.status,
        due_on: row.due_on,
        overdue: row.due_on !== null && row.due_on < today,
      },
    ];
  });
}

/** A statement stopped by the Postgres statement timeout is a graph too large, said so. */
function tooLargeOnTimeout(what: string) {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === QUERY_CANCELED) {
      throw new GraphTooLarge(`${what} is too large to walk within the time budget`);
    }
    throw error;
  };
}

/**
 * The longest chain of open tasks `gid` waits on, nearest first: each step goes to the
 * dependency that starts the longest remaining chain, the earliest created among equals. The
 * walk reaches at most MAX_WALK tasks (the `depth=all` bound); past it, GraphTooLarge.
 */
export async function criticalPath(
  deps: GraphReadDeps,
  gid: string,
  principal: Principal,
): Promise<TaskOnGraph[]> {
  const root = visibleOrNotFound(await findTask(deps.db, gid), principal, `Task ${gid}`);
  const walk = await openDependencyWalk(deps.db, gid, MAX_WALK).catch(
    tooLargeOnTimeout(`The dependency graph below task ${gid}`),
  );
  if (walk.gids.length > MAX_WALK) {
    throw new GraphTooLarge(
      `Task ${gid} waits on more than ${MAX_WALK} open tasks, too many to walk for a critical path`,
    );
  }
  // Node 0 is the task itself: the chain starts below it.
  const created = new Float64Array(walk.created.length + 1);
  created[0] = root.created_at.getTime();
  created.set(walk.created, 1);
  const graph = indexed({ gids: [root.gid, ...walk.gids], created, edges: walk.edges });
  const chain = longestChain(graph.gids.length, 0, graph.waiter, graph.dependency, graph.before);
  return onGraph(
    deps,
    chain.map((node) => graph.gids[node] ?? ''),
  );
}

export interface Bottleneck extends TaskOnGraph {
  direct_count: number;
  blocked_count: number;
}

/**
 * How many batches of exact counting a ranking may run (bounded work): 400 batches count every
 * task of a 100,000-task graph; a graph whose bounds prune nothing past that is a 422.
 */
export const MAX_COUNT_BATCHES = 400;

/**
 * The open tasks of a business (or of one project in it) that hold up the most open work:
 * ranked by how many distinct open tasks wait on them at any depth (exact), then by how many
 * wait directly, then earliest created. Only open tasks and the edges between them count: a
 * closed task waits on nothing and holds nothing up.
 */
export async function bottlenecks(
  deps: GraphReadDeps,
  input: { business: string; project?: string; limit: number },
  principal: Principal,
): Promise<Bottleneck[]> {
  businessScope(allowedBusinesses(principal), input.business);
  const loadedGraph = await openGraph(deps.db, input.business, input.project).catch(
    tooLargeOnTimeout(`The dependency graph of business ${input.business}`),
  );
  const graph = indexed(loadedGraph);
  const { inProject } = loadedGraph;
  const ranked = topBlockers(waiterGraph(graph.gids.length, graph.waiter, graph.dependency), {
    limit: input.limit,
    before: graph.before,
    budget: MAX_COUNT_BATCHES,
    ...(input.project === undefined ? {} : { eligible: (node: number) => inProject[node] === '1' }),
  });
  if (ranked === null) {
    throw new GraphTooLarge(
      `The dependency graph of business ${input.business} is too large to rank within the time budget`,
    );
  }
  const counts = new Map(ranked.map((r) => [graph.gids[r.node] ?? '', r]));
  const listed = await onGraph(deps, [...counts.keys()]);
  return listed.map((task) => ({
    ...task,
    direct_count: counts.get(task.gid)?.direct ?? 0,
    blocked_count: counts.get(task.gid)?.blocked ?? 0,
  }));
}
