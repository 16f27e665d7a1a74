import { mayAccessBusiness, type Principal } from '../auth/principal.ts';
import { AppError, ValidationError, type ValidationIssue } from '../platform/errors.ts';
import { findCycle } from './cycle-check.ts';
import {
  deleteEdge,
  type EdgePageRow,
  edgePage,
  insertEdges,
  lockBusinessGraph,
  type TaskColumn,
} from './dependency.repository.ts';
import { decodeCursor, type EdgeListing, encodeCursor } from './keyset-cursor.ts';
import { appendFacts } from './outbox.repository.ts';
import { findTask, findTasks, type TaskRow } from './task.repository.ts';
import { type TaskDeps, visibleOrNotFound } from './task.service.ts';
import { taskFact } from './task-facts.ts';
import type { WriteOptions } from './write-hooks.ts';

export interface DependencyDeps extends TaskDeps {
  /** Signs pagination cursors; the same on every instance (see cursor-key.ts). */
  cursorKey: Buffer;
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
 * caller sees in another business, is a 422 at its place in the body: an edge never crosses
 * businesses.
 */
export async function addDependencies(
  deps: DependencyDeps,
  gid: string,
  dependencyGids: readonly string[],
  principal: Principal,
  options: WriteOptions<DependenciesAdded> = {},
): Promise<DependenciesAdded> {
  const now = deps.now();
  const wanted = [...new Set(dependencyGids)];
  let result: DependenciesAdded;
  try {
    result = await deps.db.transaction().execute(async (trx) => {
      const task = visibleOrNotFound(await findTask(trx, gid), gid, principal);
      // Before anything reads the graph, so the cycle check sees every committed edge.
      await lockBusinessGraph(trx, task.business);
      const found = new Map((await findTasks(trx, wanted)).map((row) => [row.gid, row]));
      // Unknown and invisible are the same 404, as everywhere else: nothing leaks across tokens.
      const missing = wanted.filter((dependencyGid) => {
        const other = found.get(dependencyGid);
        return dependencyGid !== gid && (!other || !mayAccessBusiness(principal, other.business));
      });
      if (missing.length > 0) {
        throw new AppError('not_found', `Task ${missing.join(', ')} does not exist.`, {
          errors: missing.map((dependencyGid) => ({
            field: `dependencies[${dependencyGids.indexOf(dependencyGid)}]`,
            code: 'not_found',
            message: `Task ${dependencyGid} does not exist.`,
          })),
        });
      }
      const issues: ValidationIssue[] = [];
      dependencyGids.forEach((dependencyGid, index) => {
        const loc = ['body', 'dependencies', index];
        const other = found.get(dependencyGid);
        if (dependencyGid === gid) {
          issues.push({ loc, msg: 'A task cannot depend on itself', type: 'value_error' });
        } else if (other && other.business !== task.business) {
          issues.push({
            loc,
            msg: `Task ${dependencyGid} belongs to another business; dependencies stay within one business`,
            type: 'value_error',
          });
        }
      });
      if (issues.length > 0) throw new ValidationError(issues);
      const cycle = await findCycle(trx, gid, wanted);
      if (cycle) {
        throw new AppError(
          'conflict',
          `Adding these dependencies would create a cycle: ${cycle.join(' → ')}.`,
          { members: { cycle } },
        );
      }
      const edges = await insertEdges(trx, task.business, gid, wanted, now);
      const added = edges.sort((a, b) => a.id - b.id).map((edge) => edge.dependency_gid);
      await appendFacts(
        trx,
        added.map((dependencyGid) => taskFact('dependency_added', task, now, { dependencyGid })),
      );
      const value = { task, added };
      await options.beforeCommit?.(trx, value);
      return value;
    });
  } catch (error) {
    // The task or a dependency was deleted between our read and the insert.
    if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) {
      throw new AppError('not_found', `Task ${gid} or one of its dependencies no longer exists.`);
    }
    throw error;
  }
  if (result.added.length > 0) deps.factsCommitted();
  return result;
}

export async function removeDependency(
  deps: DependencyDeps,
  gid: string,
  dependencyGid: string,
  principal: Principal,
  options: WriteOptions<TaskRow> = {},
): Promise<void> {
  const now = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    const task = visibleOrNotFound(await findTask(trx, gid), gid, principal);
    const edge = await deleteEdge(trx, gid, dependencyGid);
    if (!edge) {
      throw new AppError('not_found', `Task ${gid} does not depend on task ${dependencyGid}.`);
    }
    await appendFacts(trx, [taskFact('dependency_removed', task, now, { dependencyGid })]);
    await options.beforeCommit?.(trx, task);
  });
  deps.factsCommitted();
}

export interface EdgeListPage {
  rows: EdgePageRow[];
  hasMore: boolean;
  nextOffset: string | null;
}

/** The keyset position a `next_offset` cursor names (0 for none), or a 422 on `offset`. */
export function edgeCursorPosition(
  deps: Pick<DependencyDeps, 'cursorKey'>,
  listing: EdgeListing,
  gid: string,
  offset: string | undefined,
): number {
  return offset === undefined ? 0 : decodeCursor(deps.cursorKey, offset, { listing, taskGid: gid });
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
  page: { limit: number; afterId: number; columns?: readonly TaskColumn[] },
  principal: Principal,
): Promise<EdgeListPage> {
  const found = await edgePage(deps.db, listing, gid, {
    afterId: page.afterId,
    limit: page.limit + 1,
    columns: page.columns ?? [],
  });
  if (found.business === undefined || !mayAccessBusiness(principal, found.business)) {
    throw new AppError('not_found', `Task ${gid} does not exist.`);
  }
  const hasMore = found.rows.length > page.limit;
  const shown = hasMore ? found.rows.slice(0, page.limit) : found.rows;
  const last = shown.at(-1);
  return {
    rows: shown,
    hasMore,
    nextOffset:
      hasMore && last
        ? encodeCursor(deps.cursorKey, { listing, taskGid: gid, afterId: last.edge_id })
        : null,
  };
}
