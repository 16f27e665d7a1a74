import type { OutboxRow } from './outbox-reader.ts';

export interface FactRow {
  fact_id: number;
  kind: string;
  business: string;
  task_gid: string;
  occurred_at: string;
  project: string;
  assignee: string;
  status: string;
  previous_status: string;
  due_on: string | null;
  task_created_at: string;
  dependency_gid: string;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Outbox fact → ClickHouse `facts` row. Missing labels become '' (ClickHouse has no null cost). */
export function toFactRow(row: OutboxRow): FactRow {
  const payload = row.payload;
  return {
    fact_id: Number(row.id),
    kind: row.kind,
    business: row.business,
    task_gid: row.task_gid,
    occurred_at: row.occurred_at.toISOString(),
    project: text(payload.project),
    assignee: text(payload.assignee),
    status: text(payload.status),
    previous_status: text(payload.previous_status),
    due_on: typeof payload.due_on === 'string' ? payload.due_on : null,
    task_created_at: text(payload.task_created_at) || row.occurred_at.toISOString(),
    dependency_gid: text(payload.dependency_gid),
  };
}
