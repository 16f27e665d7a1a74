import { needs } from '../catalog/catalog.ts';
import { completedTasksTable, flowSource } from './sql/flow-source.ts';
import { inlineSelect, selectClauses } from './sql/select-clauses.ts';
import { onRollup, readsState, type SourceContext } from './sql/source-context.ts';
import { raw, render, type SqlValue } from './sql/sql-value.ts';
import { factsStateTables, spanSelect } from './sql/state-from-facts.ts';
import { rollupStateTable } from './sql/state-from-rollups.ts';
import { stateSource } from './sql/state-select.ts';

/*
 * Where each metric's rows come from, as typed values for the compiler: flow over facts or a
 * rollup, state from facts, state from a rollup (built in `sql/`). The compiler renders the
 * statement once; values stay bound as `{name:Type}` placeholders.
 */

export type { SourceContext } from './sql/source-context.ts';
export { NEVER, OPEN } from './sql/state-from-facts.ts';

const text = (value: SqlValue) => render(value).sql;

/** The flow select's clauses, one line each (see `flowSource`). */
export const flowSelect = (ctx: SourceContext): SqlValue[] => selectClauses(flowSource(ctx));

/** The state select's clauses, one line each (see `stateSource`). */
export const stateSelect = (ctx: SourceContext): SqlValue[] => selectClauses(stateSource(ctx));

/**
 * CTEs the state select (and, for completion_rate on facts, the flow select) read from:
 * `completed_tasks`, then `task_at` (from facts or from the rollup), with blocked_tasks on
 * facts `edge_at` and `blocked_at` too.
 */
export function commonTables(ctx: SourceContext): SqlValue[] {
  const tables: SqlValue[] = [];
  if (!onRollup(ctx) && needs(ctx, 'completed_tasks')) tables.push(completedTasksTable(ctx));
  if (readsState(ctx)) {
    tables.push(...(onRollup(ctx) ? [rollupStateTable(ctx)] : factsStateTables(ctx)));
  }
  return tables;
}

/** Facts of one entity as spans [occurred_at, next_at), on one line (see `spanSelect`). */
export const spans = (partition: string, columns: string, where: string): string =>
  text(inlineSelect(spanSelect(raw(partition), raw(columns), raw(where))));
