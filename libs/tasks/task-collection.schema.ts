import type { JsonSchema } from '../http/validation.ts';
import type { TaskStatus } from '../storage/database.ts';
import { OPT_FIELDS_PARAMETER } from './opt-fields.ts';
import { dueDate } from './task.schemas.ts';
import {
  instantParameter,
  type LabelFilter,
  multiValueParameter,
  parseInstant,
  parseLabels,
  parseStatuses,
} from './task-filters.ts';

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
  'due_on[gte]'?: string;
  'due_on[lt]'?: string;
}

/** Timestamp columns with `[gte]`/`[lt]` range filters. */
export const RANGE_FIELDS = ['created_at', 'updated_at', 'completed_at'] as const;
type RangeKey = `${(typeof RANGE_FIELDS)[number]}[${'gte' | 'lt'}]`;

/** The filters whose values are parsed beyond the schema (lists, `null`, date-only bounds). */
export type TaskFilters = {
  status?: TaskStatus[] | undefined;
  project?: LabelFilter | undefined;
  assignee?: LabelFilter | undefined;
} & { [K in RangeKey]?: Date | undefined };

const text = { type: 'string', minLength: 1, maxLength: 200 };
const day = dueDate;
const rangeKeys = RANGE_FIELDS.flatMap((field) =>
  (['gte', 'lt'] as const).map((op) => [`${field}[${op}]` as RangeKey, field, op] as const),
);

/** Search text: at least three characters, so that a trigram index can answer it. */
export const SEARCH_PARAMETER = {
  type: 'string',
  minLength: 3,
  maxLength: 200,
  description:
    'Case-insensitive search in task names: tasks whose name contains this text (at least 3 characters).',
};

export const taskCollectionQuery: JsonSchema = {
  type: 'object',
  properties: {
    // Bounded so that the row offset, (page - 1) × per_page, stays a Postgres bigint.
    page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, default: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    sort: { type: 'string', enum: TASK_SORT_FIELDS, default: 'created_at' },
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
    business: text,
    status: multiValueParameter(
      'One or more of open, in_progress, completed, cancelled: comma-separated or repeated.',
    ),
    project: multiValueParameter(
      'One or more projects, comma-separated or repeated; `null` matches tasks without a project.',
    ),
    assignee: multiValueParameter(
      'One or more assignees, comma-separated or repeated; `null` matches unassigned tasks.',
    ),
    q: SEARCH_PARAMETER,
    ...Object.fromEntries(rangeKeys.map(([key, field, op]) => [key, instantParameter(field, op)])),
    'due_on[gte]': day,
    'due_on[lt]': day,
    opt_fields: OPT_FIELDS_PARAMETER,
  },
  // An unknown filter is refused rather than ignored: a typo must not widen the result.
  additionalProperties: false,
};

/** The route checks for the filters the schema only types; each fails at its own query loc. */
export function taskFilterChecks(query: Record<string, unknown>): {
  [K in keyof TaskFilters]-?: () => TaskFilters[K];
} {
  return {
    status: () => parseStatuses('status', query.status),
    project: () => parseLabels('project', query.project),
    assignee: () => parseLabels('assignee', query.assignee),
    ...(Object.fromEntries(
      rangeKeys.map(([key]) => [key, () => parseInstant(key, query[key])]),
    ) as { [K in RangeKey]: () => Date | undefined }),
  };
}
