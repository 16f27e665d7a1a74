import { blockedMsAt } from './blocked-time.ts';
import type { BlockedChange, Fact, FactKind } from './outbox.repository.ts';
import type { TaskRow } from './task.repository.ts';

/**
 * A fact describing `task` as it is after the change and, for a change of state, as it was
 * before it (`previous`): state metrics add the new state and take away the old one, so they
 * need no replay of each task's history.
 */
export function taskFact(
  kind: FactKind,
  task: TaskRow,
  occurredAt: Date,
  extra: { previous?: TaskRow; dependencyGid?: string; blockedChanges?: BlockedChange[] } = {},
): Fact {
  const previous = extra.previous;
  return {
    kind,
    business: task.business,
    task_gid: task.gid,
    occurred_at: occurredAt,
    payload: {
      name: task.name,
      project: task.project,
      assignee: task.assignee,
      status: task.status,
      previous_status: previous?.status ?? null,
      ...(previous
        ? {
            previous_project: previous.project,
            previous_assignee: previous.assignee,
            previous_due_on: previous.due_on,
          }
        : {}),
      due_on: task.due_on,
      task_created_at: task.created_at.toISOString(),
      ...(extra.dependencyGid ? { dependency_gid: extra.dependencyGid } : {}),
      ...(kind === 'task_completed'
        ? {
            created_project: task.created_project,
            created_assignee: task.created_assignee,
            created_status: task.created_status ?? task.status,
            // `previous` is the task before this change: completed before if it had a date.
            first_completion: !previous?.first_completed_at,
            started_at: task.started_at?.toISOString() ?? null,
            // The completion closes the task, ending any blocked spell at this instant.
            blocked_ms: previous ? blockedMsAt(previous, occurredAt) : task.blocked_ms,
          }
        : {}),
      blocked_changes: extra.blockedChanges ?? [],
    },
  };
}

/**
 * The most blocked changes one fact carries. A write's changes are summed per label set (see
 * blocked-changes.repository.ts), so most writes carry a handful; one whose dependents span more label
 * sets than this spreads them over `blocked_changed` facts, so no fact (and no insert of a
 * batch of facts) grows with the number of dependents.
 */
export const MAX_BLOCKED_PER_FACT = 256;

/**
 * `fact` with at most `MAX_BLOCKED_PER_FACT` of its blocked changes, followed by as many
 * `blocked_changed` facts as the rest needs. Those copy the fact's task, labels and instant, so
 * wherever a metric groups facts they fall in the group the fact itself makes, and no metric
 * counts their kind; the rollups only add up their changes.
 */
export function withBlockedChunks(fact: Fact): Fact[] {
  const changes = fact.payload.blocked_changes ?? [];
  if (changes.length <= MAX_BLOCKED_PER_FACT) return [fact];
  const chunks: BlockedChange[][] = [];
  for (let i = 0; i < changes.length; i += MAX_BLOCKED_PER_FACT) {
    chunks.push(changes.slice(i, i + MAX_BLOCKED_PER_FACT));
  }
  const [first = [], ...rest] = chunks;
  const { name, project, assignee, status, due_on, task_created_at } = fact.payload;
  return [
    { ...fact, payload: { ...fact.payload, blocked_changes: first } },
    ...rest.map(
      (chunk): Fact => ({
        kind: 'blocked_changed',
        business: fact.business,
        task_gid: fact.task_gid,
        occurred_at: fact.occurred_at,
        payload: {
          name,
          project,
          assignee,
          status,
          // The labels stay as they are: nothing here opens or closes a task.
          previous_status: status,
          previous_project: project,
          previous_assignee: assignee,
          previous_due_on: due_on,
          due_on,
          task_created_at,
          blocked_changes: chunk,
        },
      }),
    ),
  ];
}
