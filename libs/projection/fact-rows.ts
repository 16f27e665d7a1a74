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
  previous_project: string;
  previous_assignee: string;
  previous_due_on: string | null;
  due_on: string | null;
  task_created_at: string;
  dependency_gid: string;
  /** Completion facts only: the task's labels at creation, and whether it is its first completion. */
  created_project?: string;
  created_assignee?: string;
  created_status?: string;
  first_completion?: 0 | 1;
  /** Completion facts only: the task's first move to in_progress, when it had one (work time). */
  started_at?: string;
  /** Completion facts only: milliseconds the task spent blocked, when recorded. */
  blocked_ms?: number;
  /** Whether the fact says what it did to blocked_tasks; the arrays below list it, one per change. */
  blocked_known?: 1;
  blocked_project?: string[];
  blocked_assignee?: string[];
  blocked_status?: string[];
  blocked_change?: number[];
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const date = (value: unknown): string | null => (typeof value === 'string' ? value : null);
/** Facts written before `previous_` members existed changed no labels but the status. */
const before = (payload: Record<string, unknown>, member: string) =>
  `previous_${member}` in payload ? payload[`previous_${member}`] : payload[member];

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
    previous_project: text(before(payload, 'project')),
    previous_assignee: text(before(payload, 'assignee')),
    previous_due_on: date(before(payload, 'due_on')),
    due_on: date(payload.due_on),
    task_created_at: text(payload.task_created_at) || row.occurred_at.toISOString(),
    dependency_gid: text(payload.dependency_gid),
    // Left out elsewhere: the columns' defaults say the same, in fewer bytes to send and parse.
    // A completion written before the write side recorded these has no created_status, which
    // the rollup backfill recognises and works out from the facts themselves.
    ...(row.kind === 'task_completed' && typeof payload.created_status === 'string'
      ? {
          created_project: text(payload.created_project),
          created_assignee: text(payload.created_assignee),
          created_status: payload.created_status,
          first_completion: payload.first_completion === true ? 1 : 0,
        }
      : {}),
    ...(row.kind === 'task_completed' && typeof payload.started_at === 'string'
      ? { started_at: payload.started_at }
      : {}),
    ...(row.kind === 'task_completed' && typeof payload.blocked_ms === 'number'
      ? { blocked_ms: payload.blocked_ms }
      : {}),
    ...blockedColumns(payload.blocked_changes),
  };
}

/**
 * A fact written before the write side recorded blocked changes has no `blocked_changes`: it
 * keeps `blocked_known` 0, and a rollup backfill works blocked_tasks out from the facts.
 */
function blockedColumns(changes: unknown): Partial<FactRow> {
  if (!Array.isArray(changes)) return {};
  if (changes.length === 0) return { blocked_known: 1 };
  const list = changes as Array<{
    project: string | null;
    assignee: string | null;
    status: string;
    change: number;
  }>;
  return {
    blocked_known: 1,
    blocked_project: list.map((c) => c.project ?? ''),
    blocked_assignee: list.map((c) => c.assignee ?? ''),
    blocked_status: list.map((c) => c.status),
    blocked_change: list.map((c) => c.change),
  };
}

/**
 * A fact reduced to what can always be stored: its identity, instant and labels, no dates and
 * no blocked changes. Only for a fact ClickHouse refused as it was (see projector.ts).
 */
export function bareFactRow(row: FactRow): FactRow {
  return {
    fact_id: row.fact_id,
    kind: row.kind,
    business: row.business,
    task_gid: row.task_gid,
    occurred_at: row.occurred_at,
    project: row.project,
    assignee: row.assignee,
    status: row.status,
    previous_status: row.previous_status,
    previous_project: row.previous_project,
    previous_assignee: row.previous_assignee,
    previous_due_on: null,
    due_on: null,
    task_created_at: row.occurred_at,
    dependency_gid: row.dependency_gid,
  };
}
