import { DATE_OR_INSTANT_PATTERN } from '../http/date-time-format.ts';
import { ValidationError } from '../http/errors.ts';
import { enforcedInCode } from '../http/json-schema.ts';
import { commaList, oneOf, trimmedValue } from '../http/text-patterns.ts';
import type { JsonSchema } from '../http/validation.ts';
import { OPT_FIELDS_PARAMETER } from './opt-fields.ts';
import { dueDate } from './task.schemas.ts';
import {
  instantParameter,
  type LabelFilter,
  MAX_FILTER_VALUES,
  multiValueParameter,
  parseInstant,
  parseLabels,
  parseStatuses,
  RANGE_OP_NAMES,
  type RangeKey,
  rangeKey,
} from './task-filters.ts';
import { TASK_STATUSES, type TaskStatus } from './task-status.ts';

export const TASK_SORT_FIELDS = ['created_at', 'updated_at', 'name', 'due_on'] as const;
export type TaskSortField = (typeof TASK_SORT_FIELDS)[number];

/** Validated query of `GET /api/v1/tasks`; range filters arrive as literal `field[op]` keys. */
export interface TaskCollectionQuery {
  page: number;
  per_page: number;
  sort: TaskSortField;
  order: 'asc' | 'desc';
  business?: string;
  q?: string;
}

/** Timestamp columns with `[gte]`/`[lt]` range filters. */
export const INSTANT_FIELDS = ['created_at', 'updated_at', 'completed_at'] as const;
type InstantKey = RangeKey<(typeof INSTANT_FIELDS)[number]>;
type DueKey = RangeKey<'due_on'>;
/** Every column with range filters: the instants, and the due date (a plain date). */
export const RANGE_FIELDS = [...INSTANT_FIELDS, 'due_on'] as const;

/** The filters the route hands to the query, checked beyond the schema (lists, `null`, bounds). */
export type TaskFilters = {
  status?: TaskStatus[] | undefined;
  project?: LabelFilter | undefined;
  assignee?: LabelFilter | undefined;
} & { [K in InstantKey]?: Date | undefined } & { [K in DueKey]?: string | undefined };

const text = { type: 'string', minLength: 1, maxLength: 200 };
const instantKeys = INSTANT_FIELDS.flatMap((field) =>
  RANGE_OP_NAMES.map((op) => [rangeKey(field, op), field, op] as const),
);
const dueKeys = RANGE_OP_NAMES.map((op) => rangeKey('due_on', op));

/**
 * A multi-valued filter whose values each match `value` (a regex): as text, a comma-separated
 * list; repeated, a list of such texts. The parsers in task-filters.ts check it, with their own
 * messages; the total count over repetitions is theirs alone to check.
 */
function listFilter(description: string, value: string): JsonSchema {
  const list = commaList(value, { maxValues: MAX_FILTER_VALUES });
  return {
    ...multiValueParameter(description),
    // `pattern` holds for the text form, `items` and `maxItems` for the repeated one; stated in
    // each branch too, for tools that draw a value from one branch and read only its rules.
    ...enforcedInCode({
      pattern: list,
      items: { pattern: list },
      maxItems: MAX_FILTER_VALUES,
      anyOf: [{ pattern: list }, { items: { pattern: list }, maxItems: MAX_FILTER_VALUES }],
    }),
  };
}

/** `status=open,in_progress`: task statuses. */
export const statusFilter = (description: string): JsonSchema =>
  listFilter(description, oneOf(TASK_STATUSES));

/** Labels of 1–200 characters once trimmed (`null` for none), as parseLabels reads them. */
const labelFilter = (description: string): JsonSchema => listFilter(description, trimmedValue(200));

/** What parseInstant takes: a date, or a date-time instantOf reads (see date-time-format.ts). */
const instantFilter = (field: string, op: (typeof RANGE_OP_NAMES)[number]): JsonSchema => ({
  ...instantParameter(field, op),
  ...enforcedInCode({
    pattern: DATE_OR_INSTANT_PATTERN,
    anyOf: [{ format: 'date' }, { format: 'date-time' }],
  }),
});

/** Search text: at least three characters, so that a trigram index can answer it. */
export const SEARCH_PARAMETER = {
  type: 'string',
  minLength: 3,
  maxLength: 200,
  description:
    'Case-insensitive search in task names: tasks whose name contains this text (at least 3 characters).',
};

/** How deep page-number lists go unless configured (CAIRN_TASK_LIST_MAX_DEPTH). */
export const DEFAULT_TASK_LIST_MAX_DEPTH = 10_000;

/** The query schema of `GET /api/v1/tasks`, its paging described with the depth bound in force. */
export function taskCollectionQuery(maxDepth: number = DEFAULT_TASK_LIST_MAX_DEPTH): JsonSchema {
  return {
    type: 'object',
    properties: {
      // Bounded so that the row offset, (page - 1) × per_page, stays a Postgres bigint.
      page: {
        type: 'integer',
        minimum: 1,
        maximum: 2_147_483_647,
        default: 1,
        description: `Page number, 1-indexed. Lists reach ${maxDepth} tasks deep: when more tasks match, only pages with page × per_page ≤ ${maxDepth} are served (a deeper one is a 422 at ["query","page"]), \`meta.total\` is ${maxDepth} with \`meta.total_is_lower_bound\` true, and \`meta.total_pages\` counts the pages that can be reached. To go further, narrow the list with filters, such as \`created_at[lt]\` set to the created_at of the last task seen (newest first).`,
      },
      per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      sort: { type: 'string', enum: TASK_SORT_FIELDS, default: 'created_at' },
      order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
      business: text,
      status: statusFilter(
        `One or more of ${TASK_STATUSES.join(', ')}: comma-separated or repeated, ${MAX_FILTER_VALUES} at most in all.`,
      ),
      project: labelFilter(
        `One or more projects, comma-separated or repeated (${MAX_FILTER_VALUES} at most in all); \`null\` matches tasks without a project.`,
      ),
      assignee: labelFilter(
        `One or more assignees, comma-separated or repeated (${MAX_FILTER_VALUES} at most in all); \`null\` matches unassigned tasks.`,
      ),
      q: SEARCH_PARAMETER,
      ...Object.fromEntries(instantKeys.map(([key, field, op]) => [key, instantFilter(field, op)])),
      ...Object.fromEntries(dueKeys.map((key) => [key, dueDate])),
      opt_fields: OPT_FIELDS_PARAMETER,
    },
    // An unknown filter is refused rather than ignored: a typo must not widen the result.
    additionalProperties: false,
  };
}

/** The pages a list with more tasks than the bound has: those that end within it. */
export const reachablePages = (perPage: number, maxDepth: number): number =>
  Math.floor(maxDepth / perPage);

/**
 * A page past the depth bound of a list that holds more tasks than the bound. An offset that
 * deep costs Postgres a walk over every skipped row, and a filter gets there for less.
 */
export function pageBeyondDepth(query: TaskCollectionQuery, maxDepth: number): ValidationError {
  // Name has no range filter: creation time is the range every list can take up from.
  const field = query.sort === 'name' ? 'created_at' : query.sort;
  const op = query.order === 'desc' ? 'lt' : 'gte';
  return ValidationError.at(
    ['query', 'page'],
    `Input should be less than or equal to ${reachablePages(query.per_page, maxDepth)}: page-number lists reach the first ${maxDepth} tasks (page × per_page ≤ ${maxDepth}) and more match. Narrow the list with filters to go further: ${field}[${op}] set to the ${field} of the last task seen (with sort=${field}&order=${query.order}), or status, project, assignee or q`,
    'less_than_equal',
  );
}

/** The route checks for the filters the schema only types; each fails at its own query loc. */
export function taskFilterChecks(query: Record<string, unknown>): {
  [K in keyof TaskFilters]-?: () => TaskFilters[K];
} {
  return {
    status: () => parseStatuses('status', query.status),
    project: () => parseLabels('project', query.project),
    assignee: () => parseLabels('assignee', query.assignee),
    ...(Object.fromEntries(
      instantKeys.map(([key]) => [key, () => parseInstant(key, query[key])]),
    ) as { [K in InstantKey]: () => Date | undefined }),
    // Already a valid date: the schema checks it.
    ...(Object.fromEntries(dueKeys.map((key) => [key, () => query[key] as string | undefined])) as {
      [K in DueKey]: () => string | undefined;
    }),
  };
}
