import { DIMENSIONS, type DimensionName } from '../catalog/catalog.ts';
import { FILTER_OPERATORS, type FilterOp } from '../catalog/filter-ops.ts';

/** One comparison of a dimension with values. */
export interface FilterCondition {
  dimension: DimensionName;
  op: FilterOp;
  /** null: rows without this label (a task without a project). */
  values: Array<string | null>;
}

/** `{"any": [...]}`: a row passes when it passes any of the elements (which may be groups). */
export interface FilterGroup {
  any: QueryFilter[];
}

/** A filter element: the query's filters all hold (AND); a group's elements any (OR). */
export type QueryFilter = FilterCondition | FilterGroup;

export const isGroup = (filter: QueryFilter): filter is FilterGroup => 'any' in filter;

/**
 * Folds the filter tree: `leaf` gets each condition with its index in pre-order (the order its
 * values are bound in, `f0`, `f1`, …), `group` the folded elements of each group.
 */
export function foldFilters<T>(
  filters: readonly QueryFilter[],
  leaf: (condition: FilterCondition, index: number) => T,
  group: (elements: T[]) => T,
): T[] {
  let next = 0;
  const fold = (filter: QueryFilter): T =>
    isGroup(filter) ? group(filter.any.map(fold)) : leaf(filter, next++);
  return filters.map(fold);
}

/** Every condition, in pre-order: the i-th binds its values as `f{i}`. */
export function filterConditions(filters: readonly QueryFilter[]): FilterCondition[] {
  const conditions: FilterCondition[] = [];
  foldFilters(
    filters,
    (condition) => conditions.push(condition),
    () => 0,
  );
  return conditions;
}

/** The dimensions the filters name anywhere, each once. */
export const filterDimensions = (filters: readonly QueryFilter[]): DimensionName[] => [
  ...new Set(filterConditions(filters).map((condition) => condition.dimension)),
];

/** The labels `eq` and `in` conditions name, per label dimension (nulls and time aside). */
export function namedLabels(filters: readonly QueryFilter[]): Map<DimensionName, string[]> {
  const named = new Map<DimensionName, Set<string>>();
  for (const condition of filterConditions(filters)) {
    if (!FILTER_OPERATORS[condition.op].names || DIMENSIONS[condition.dimension].time) continue;
    const values = named.get(condition.dimension) ?? new Set<string>();
    for (const value of condition.values) if (value !== null) values.add(value);
    named.set(condition.dimension, values);
  }
  return new Map([...named].map(([dimension, values]) => [dimension, [...values]]));
}
