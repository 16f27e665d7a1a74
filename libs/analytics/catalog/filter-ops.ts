/**
 * The operators of a query filter: each one's ClickHouse comparison, and whether it compares
 * with one value (a `String` parameter) or a list (`Array(String)`). The schema, the parser and
 * the compiler all read this table, so an operator means the same thing at every step.
 */
export const FILTER_OPERATORS = {
  eq: { sql: '=', oneValue: true },
  neq: { sql: '!=', oneValue: true },
  in: { sql: 'IN', oneValue: false },
  not_in: { sql: 'NOT IN', oneValue: false },
} as const;

export type FilterOp = keyof typeof FILTER_OPERATORS;
export const FILTER_OPS = Object.keys(FILTER_OPERATORS) as readonly FilterOp[];
