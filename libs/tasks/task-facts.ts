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
          }
        : {}),
      blocked_changes: extra.blockedChanges ?? [],
    },
  };
}
