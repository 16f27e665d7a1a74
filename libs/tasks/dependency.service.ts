import { allowedBusinesses, visibleBusiness, visibleOrNotFound } from '../auth/access.ts';
import type { Principal } from '../auth/principal.ts';
import { AppError } from '../http/errors.ts';
import type { Db } from '../storage/database.ts';
import { trackBlocked } from './blocked-changes.repository.ts';
import { recordBlockedTime } from './blocked-time.ts';
import { findCycle } from './cycle-check.repository.ts';
import {
  deleteEdge,
  type EdgePageRow,
  edgePage,
  insertEdges,
  lockBusinessGraph,
  type TaskColumn,
  type WalkPageRow,
  walkPage,
} from './dependency.repository.ts';
import { decodeCursor, type EdgeListing, encodeCursor } from './keyset-cursor.ts';
import { appendFacts } from './outbox.repository.ts';
import { findTask, findTasks, type TaskRow } from './task.repository.ts';
import type { TaskDeps } from './task.service.ts';
import { DependenciesRefused, UnknownDependencies, WalkTooLarge } from './task-errors.ts';
import { taskFact } from './task-facts.ts';
import type { TaskStatus } from './task-status.ts';

export interface DependencyDeps extends TaskDeps {
  /** Signs pagination cursors; the same on every instance (see cursor-key.ts). */
  cursorKey: Buffer;
  /** Keys being rotated out: cursors they sealed still open, new ones use `cursorKey`. */
  previousCursorKeys?: readonly Buffer[];
}

export interface DependenciesAdded {
  task: TaskRow;
  /** Gids whose edge this request created; the others were already there. */
  added: string[];
}

const FOREIGN_KEY_VIOLATION = '23503';

/**
 * `gid` now depends on every listed task, all or nothing. A listed task that is unknown or
 * invisible to the caller is a 404 (like any object outside the token); itself, or a task the
 * caller sees in another business, is refused (a 422 at its place in the body, which the route
 * finds): an edge never crosses businesses.
 */
export async function addDependencies(
  trx: Db,
  gid: string,
  dependencyGids: readonly string[],
  principal: Principal,
  now: Date,
): Promise<DependenciesAdded> {
  const wanted = [...new Set(dependencyGids)];
  try {
    const task = visibleOrNotFound(await findTask(trx, gid), principal, `Task ${gid}`);
    // Before anything reads the graph, so the cycle check sees every committed edge.
    await lockBusinessGraph(trx, task.business);
    const found = new Map((await findTasks(trx, wanted)).map((row) => [row.gid, row]));
    // Unknown and invisible are the same 404, as everywhere else: nothing leaks across tokens.
    const missing = wanted.filter((dependencyGid) => {
      const other = found.get(dependencyGid);
      return dependencyGid !== gid && (!other || !visibleBusiness(principal, other.business));
    });
    if (missing.length > 0) throw new UnknownDependencies(missing);
    const refused = new Map<string, string>();
    for (const dependencyGid of wanted) {
      const other = found.get(dependencyGid);
      if (dependencyGid === gid) refused.set(dependencyGid, 'A task cannot depend on itself');
      else if (other && other.business !== task.business) {
        refused.set(
          dependencyGid,
          `Task ${dependencyGid} belongs to another business; dependencies stay within one business`,
        );
      }
    }
    if (refused.size > 0) throw new DependenciesRefused(refused);
    const cycle = await findCycle(trx, gid, wanted);
    if (cycle) {
      throw new AppError(
        'conflict',
        `Adding these dependencies would create a cycle: ${cycle.join(' → ')}.`,
        { members: { cycle } },
      );
    }
    const [edges, blockedChanges] = await trackBlocked(trx, { gids: [gid] }, () =>
      insertEdges(trx, task.business, gid, wanted, now),
    );
    await recordBlockedTime(trx, { gids: [gid] }, now);
    const added = edges.sort((a, b) => a.id - b.id).map((edge) => edge.dependency_gid);
    // The write's blocked changes ride on its first fact: every fact of it has the same instant.
    await appendFacts(
      trx,
      added.map((dependencyGid, i) =>
        taskFact('dependency_added', task, now, {
          dependencyGid,
          ...(i === 0 ? { blockedChanges } : {}),
        }),
      ),
    );
    return { task, added };
  } catch (error) {
    // The task or a dependency was deleted between our read and the insert.
    if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) {
      throw new AppError('not_found', `Task ${gid} or one of its dependencies no longer exists.`);
    }
    throw error;
  }
}

export async function removeDependency(
  trx: Db,
  gid: string,
  dependencyGid: string,
  principal: Principal,
  now: Date,
): Promise<void> {
  const task = visibleOrNotFound(await findTask(trx, gid), principal, `Task ${gid}`);
  await lockBusinessGraph(trx, task.business);
  const [edge, blockedChanges] = await trackBlocked(trx, { gids: [gid] }, () =>
    deleteEdge(trx, gid, dependencyGid),
  );
  await recordBlockedTime(trx, { gids: [gid] }, now);
  if (!edge) {
    throw new AppError('not_found', `Task ${gid} does not depend on task ${dependencyGid}.`);
  }
  await appendFacts(trx, [
    taskFact('dependency_removed', task, now, { dependencyGid, blockedChanges }),
  ]);
}

export interface CursorPage<R> {
  rows: R[];
  hasMore: boolean;
  nextOffset: string | null;
}
export type EdgeListPage = CursorPage<EdgePageRow>;

/** What a listing page asks for besides its position. */
interface PageRequest {
  limit: number;
  columns?: readonly TaskColumn[];
  statuses?: readonly TaskStatus[] | undefined;
}

/** `found` holds up to limit + 1 rows: the extra one only says that more follow. */
function cursorPage<R>(found: R[], limit: number, cursorAfter: (last: R) => string): CursorPage<R> {
  const hasMore = found.length > limit;
  const rows = hasMore ? found.slice(0, limit) : found;
  const last = rows.at(-1);
  return { rows, hasMore, nextOffset: hasMore && last ? cursorAfter(last) : null };
}

/** The keyset position a `next_offset` cursor names (0 for none), or a 422 on `offset`. */
export function edgeCursorPosition(
  deps: Pick<DependencyDeps, 'cursorKey' | 'previousCursorKeys'>,
  listing: EdgeListing,
  gid: string,
  offset: string | undefined,
): number {
  return offset === undefined
    ? 0
    : (decodeCursor(cursorKeys(deps), offset, { listing, taskGid: gid }) as number);
}

/** The gid a transitive (`depth=all`) cursor names ('' for the first page), or a 422 on `offset`. */
export function walkCursorPosition(
  deps: Pick<DependencyDeps, 'cursorKey' | 'previousCursorKeys'>,
  listing: EdgeListing,
  gid: string,
  offset: string | undefined,
): string {
  return offset === undefined
    ? ''
    : (decodeCursor(cursorKeys(deps), offset, {
        listing: `${listing}:all`,
        taskGid: gid,
      }) as string);
}

function cursorKeys(deps: Pick<DependencyDeps, 'cursorKey' | 'previousCursorKeys'>): Buffer[] {
  return [deps.cursorKey, ...(deps.previousCursorKeys ?? [])];
}

/**
 * One page of a task's dependents or dependencies, after the edge `afterId` (see
 * `edgeCursorPosition`). Keyset on the edge id: every dependent that exists for the whole walk
 * is returned exactly once, whatever is added or removed meanwhile.
 */
export async function listEdges(
  deps: DependencyDeps,
  listing: EdgeListing,
  gid: string,
  page: PageRequest & { afterId: number },
  principal: Principal,
): Promise<EdgeListPage> {
  const found = await edgePage(deps.db, listing, gid, {
    afterId: page.afterId,
    limit: page.limit + 1,
    columns: page.columns ?? [],
    statuses: page.statuses,
    // In the page query itself, so a hidden task costs exactly what a missing one does.
    businesses: allowedBusinesses(principal),
  });
  visibleOrNotFound(
    found.business === undefined ? undefined : { business: found.business },
    principal,
    `Task ${gid}`,
  );
  return cursorPage(found.rows, page.limit, (last) =>
    encodeCursor(deps.cursorKey, { listing, taskGid: gid, afterId: last.edge_id }),
  );
}

/**
 * How many (task, depth) pairs a transitive listing may walk. Past it the answer is a 422
 * naming `depth`: the work per page stays bounded (well under a second on a server), whatever
 * the graph.
 */
export const MAX_WALK = 100_000;

/**
 * One page of every task reachable from `gid` (`depth=all`), in gid order after `afterGid`
 * (see `walkCursorPosition` and `walkPage`). The task is checked before anything is walked.
 */
export async function listWalk(
  deps: DependencyDeps,
  listing: EdgeListing,
  gid: string,
  page: PageRequest & { afterGid: string },
  principal: Principal,
): Promise<CursorPage<WalkPageRow>> {
  visibleOrNotFound(await findTask(deps.db, gid), principal, `Task ${gid}`);
  const found = await walkPage(deps.db, listing, gid, {
    afterGid: page.afterGid,
    limit: page.limit + 1,
    columns: page.columns ?? [],
    statuses: page.statuses,
    maxReach: MAX_WALK,
  });
  if (found.reached > MAX_WALK) {
    throw new WalkTooLarge(
      `More than ${MAX_WALK} tasks are reachable from task ${gid}, too many to list with depth=all; page through depth=1 instead`,
    );
  }
  return cursorPage(found.rows, page.limit, (last) =>
    encodeCursor(deps.cursorKey, { listing: `${listing}:all`, taskGid: gid, afterId: last.gid }),
  );
}
