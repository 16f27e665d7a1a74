/**
 * The operators of a query filter, read by the schema, the parser and the compiler, so an
 * operator means the same thing at every step:
 * - `sql`: a comparison (`project = {f0:String}`), or for a substring operator the ClickHouse
 *   function that tells whether the label holds any of the values, ignoring case;
 * - `oneValue`: compared with one value (a `String` parameter) rather than a list;
 * - `negated`: true where the operator keeps the rows the comparison refuses;
 * - `substring`: matches part of a label; a label that is null (the stored `none`, '') holds no
 *   part of anything, so `contains` never keeps it and `not_contains` always does;
 * - `names`: its values name labels outright, so one the business never had is worth a warning.
 */
export const FILTER_OPERATORS = {
  eq: { sql: '=', oneValue: true, negated: false, substring: false, names: true },
  neq: { sql: '!=', oneValue: true, negated: true, substring: false, names: false },
  in: { sql: 'IN', oneValue: false, negated: false, substring: false, names: true },
  not_in: { sql: 'NOT IN', oneValue: false, negated: true, substring: false, names: false },
  contains: {
    sql: 'multiSearchAnyCaseInsensitiveUTF8',
    oneValue: false,
    negated: false,
    substring: true,
    names: false,
  },
  not_contains: {
    sql: 'multiSearchAnyCaseInsensitiveUTF8',
    oneValue: false,
    negated: true,
    substring: true,
    names: false,
  },
} as const;

export type FilterOp = keyof typeof FILTER_OPERATORS;
export const FILTER_OPS = Object.keys(FILTER_OPERATORS) as readonly FilterOp[];
/** Groups of `{"any": [...]}` nest this deep at most: a group inside it takes conditions only. */
export const MAX_ANY_DEPTH = 3;
