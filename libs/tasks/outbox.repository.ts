import type { Db } from '../storage/database.ts';

export type FactKind =
  | 'task_created'
  | 'task_updated'
  | 'task_completed'
  | 'task_deleted'
  | 'dependency_added'
  | 'dependency_removed';

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
  /**
   * What this write did to blocked_tasks (see blocked-changes.ts), on one fact of each write
   * and empty on the others. Absent on facts written before the write side recorded it.
   */
  blocked_changes?: BlockedChange[];
}

/** One task counted in (+1) or out of (−1) blocked_tasks under these labels. */
export interface BlockedChange {
  project: string | null;
  assignee: string | null;
  status: string;
  change: 1 | -1;
}

export interface Fact {
  kind: FactKind;
  business: string;
  task_gid: string;
  payload: FactPayload;
  occurred_at: Date;
}

/** Call inside the transaction that makes the change, so the fact commits with it or not at all. */
export async function appendFacts(db: Db, facts: Fact[]): Promise<void> {
  if (facts.length === 0) return;
  await db.insertInto('outbox').values(outboxValues(facts)).execute();
}

/** The outbox columns a write sets, in the order its statements bind them. */
export const outboxRow = (fact: Fact) => ({
  kind: fact.kind,
  business: fact.business,
  task_gid: fact.task_gid,
  payload: JSON.stringify(fact.payload),
  occurred_at: fact.occurred_at,
});

export const outboxValues = (facts: Fact[]) => facts.map(outboxRow);
