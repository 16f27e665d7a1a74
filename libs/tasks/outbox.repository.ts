import { sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import { activeTraceparent } from '../tracing/tracing.ts';

export type FactKind =
  | 'task_created'
  | 'task_updated'
  | 'task_completed'
  | 'task_deleted'
  | 'dependency_added'
  | 'dependency_removed'
  /**
   * More of the blocked changes of the write whose other fact has the same task, labels and
   * instant: no metric counts it, and it adds no group its write's own fact does not add.
   */
  | 'blocked_changed';

/**
 * The task's state after the change, so the analytics side never has to look it up; for a
 * change of state also what it was before (the `previous_` members).
 */
export interface FactPayload {
  name: string;
  project: string | null;
  assignee: string | null;
  status: string;
  previous_status: string | null;
  previous_project?: string | null;
  previous_assignee?: string | null;
  previous_due_on?: string | null;
  due_on: string | null;
  task_created_at: string;
  dependency_gid?: string;
  /**
   * `task_completed` only: the labels the task was created with, and whether this is its first
   * completion, so a rollup can credit the completion to the creation (completion_rate).
   */
  created_project?: string | null;
  created_assignee?: string | null;
  created_status?: string;
  first_completion?: boolean;
  /** `task_completed` only: the task's first move to in_progress (null: never), for work time. */
  started_at?: string | null;
  /** `task_completed` only: milliseconds the task spent blocked until now (null: not recorded). */
  blocked_ms?: number | null;
  /**
   * What this write did to blocked_tasks (see blocked-changes.repository.ts), on one fact of each write
   * and empty on the others; past `MAX_BLOCKED_PER_FACT` entries the rest ride on
   * `blocked_changed` facts. Absent on facts written before the write side recorded it.
   */
  blocked_changes?: BlockedChange[];
}

/** Tasks counted in (> 0) or out of (< 0) blocked_tasks under these labels, at most 127 each. */
export interface BlockedChange {
  project: string | null;
  assignee: string | null;
  status: string;
  change: number;
}

export interface Fact {
  kind: FactKind;
  business: string;
  task_gid: string;
  payload: FactPayload;
  occurred_at: Date;
}

/**
 * Call inside the transaction that makes the change, so the fact commits with it or not at all.
 * Each column is bound as one array, so a write of 100,000 facts (a hub's deletion removes an
 * edge each) is five parameters, never five per fact (Postgres stops at 65,535).
 */
export async function appendFacts(db: Db, facts: Fact[]): Promise<void> {
  if (facts.length === 0) return;
  const rows = outboxValues(facts);
  const column = <K extends Exclude<keyof ReturnType<typeof outboxRow>, 'trace_context'>>(
    name: K,
  ) => rows.map((row) => row[name]);
  await sql`
    insert into outbox (kind, business, task_gid, payload, occurred_at, trace_context)
    select f.kind, f.business, f.task_gid, f.payload::jsonb, f.occurred_at, ${activeTraceparent()}::text
    from unnest(
      ${column('kind')}::text[], ${column('business')}::text[], ${column('task_gid')}::text[],
      ${column('payload')}::text[], ${rows.map((row) => row.occurred_at.toISOString())}::timestamptz[]
    ) with ordinality as f(kind, business, task_gid, payload, occurred_at, n)
    order by f.n`.execute(db);
}

/** The outbox columns a write sets, in the order its statements bind them. */
export const outboxRow = (fact: Fact) => ({
  kind: fact.kind,
  business: fact.business,
  task_gid: fact.task_gid,
  payload: JSON.stringify(fact.payload),
  occurred_at: fact.occurred_at,
  trace_context: activeTraceparent(),
});

export const outboxValues = (facts: Fact[]) => facts.map(outboxRow);
