/**
 * A business name, as a token is bound to it and a task is created in it: 1 to 100 letters,
 * digits, `_`, `.` or `-`. One schema for both, so that every business a task can be created
 * in is one a token can name.
 */
export const businessName = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.-]+$',
} as const;
