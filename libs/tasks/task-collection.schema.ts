import type { JsonSchema } from '../platform/validation.ts';
import { TASK_STATUSES } from '../storage/database.ts';
import { dueDate } from './task.schemas.ts';

export const TASK_SORT_FIELDS = ['created_at', 'updated_at', 'name', 'due_on'] as const;
export type TaskSortField = (typeof TASK_SORT_FIELDS)[number];

/** Validated query of `GET /api/v1/tasks`; range filters arrive as literal `field[op]` keys. */
export interface TaskCollectionQuery {
  page: number;
  per_page: number;
  sort: TaskSortField;
  order: 'asc' | 'desc';
  business?: string;
  status?: string;
  project?: string;
  assignee?: string;
  'created_at[gte]'?: string;
  'created_at[lt]'?: string;
  'due_on[gte]'?: string;
  'due_on[lt]'?: string;
}

const text = { type: 'string', minLength: 1, maxLength: 200 };
// Postgres has no year 0; every later instant a filter can name is fine.
const instant = { type: 'string', format: 'date-time', formatMinimum: '0001-01-01T00:00:00Z' };
const day = dueDate;

export const taskCollectionQuery: JsonSchema = {
  type: 'object',
  properties: {
    // Bounded so that the row offset, (page - 1) × per_page, stays a Postgres bigint.
    page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, default: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    sort: { type: 'string', enum: TASK_SORT_FIELDS, default: 'created_at' },
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
    business: text,
    status: { type: 'string', enum: TASK_STATUSES },
    project: text,
    assignee: text,
    'created_at[gte]': instant,
    'created_at[lt]': instant,
    'due_on[gte]': day,
    'due_on[lt]': day,
  },
  // An unknown filter is refused rather than ignored: a typo must not widen the result.
  additionalProperties: false,
};
