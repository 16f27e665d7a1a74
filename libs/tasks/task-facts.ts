import type { Fact, FactKind } from './outbox.repository.ts';
import type { TaskRow } from './task.repository.ts';

/** A fact describing `task` as it is after the change. */
export function taskFact(
  kind: FactKind,
  task: TaskRow,
  occurredAt: Date,
  extra: { previousStatus?: string | null; dependencyGid?: string } = {},
): Fact {
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
      previous_status: extra.previousStatus ?? null,
      due_on: task.due_on,
      task_created_at: task.created_at.toISOString(),
      ...(extra.dependencyGid ? { dependency_gid: extra.dependencyGid } : {}),
    },
  };
}
