import { ValidationError } from '../http/errors.ts';
import { enforcedInCode } from '../http/json-schema.ts';
import { commaList, oneOf } from '../http/text-patterns.ts';
import { TASK_MEMBER_COLUMNS } from './task.tables.ts';

/** Task members `opt_fields` may add; gid, resource_type and name are always present. */
export const OPT_FIELDS = TASK_MEMBER_COLUMNS;
export type OptField = (typeof OPT_FIELDS)[number];

export const OPT_FIELDS_PARAMETER = {
  type: 'string',
  maxLength: 500,
  description: `Comma-separated task members to include beside gid, resource_type and name: ${OPT_FIELDS.join(', ')}.`,
  // Empty means none; parseOptFields refuses an unknown name with its own message.
  ...enforcedInCode({ pattern: commaList(oneOf(OPT_FIELDS), { orEmpty: true }) }),
};

/** Asana style: `opt_fields=status,due_on`; an unknown name is refused, not ignored. */
export function parseOptFields(raw: unknown): OptField[] {
  if (typeof raw !== 'string' || raw === '') return [];
  const fields = raw.split(',').map((field) => field.trim());
  const unknown = fields.filter((field) => !(OPT_FIELDS as readonly string[]).includes(field));
  if (unknown.length > 0) {
    throw ValidationError.at(
      ['query', 'opt_fields'],
      `Unknown field ${unknown.map((f) => `'${f}'`).join(', ')}; allowed: ${OPT_FIELDS.join(', ')}`,
      'enum',
    );
  }
  return [...new Set(fields as OptField[])];
}
