import { AppError } from '../http/errors.ts';
import type { TaskRow } from './task.repository.ts';

/** A task's strong entity tag: its version, which every change of its record raises. */
export function taskEtag(task: Pick<TaskRow, 'version'>): string {
  return `"${task.version}"`;
}

/** An `If-Match` header: any current task (`*`), or one of these entity tags. */
export type IfMatch = '*' | readonly string[];

const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * Parses `If-Match` (RFC 9110 §13.1.1): `*` or a comma-separated list of entity tags. A header
 * that is neither is a malformed request, not a mismatch: a 400 problem.
 */
export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const tags = trimmed.split(',').map((tag) => tag.trim());
  if (tags.length === 0 || tags.some((tag) => !ENTITY_TAG.test(tag))) {
    throw new AppError(
      'bad_request',
      'The If-Match header must be * or a list of quoted entity tags, such as "3" taken from an ETag.',
    );
  }
  return tags;
}

/**
 * Throws a 412 problem unless the task is the version `If-Match` names. Strong comparison: a
 * weak tag never matches, since a write must not rest on a representation only "equivalent".
 */
export function checkIfMatch(ifMatch: IfMatch | undefined, task: TaskRow): void {
  if (ifMatch === undefined || ifMatch === '*') return;
  const current = taskEtag(task);
  if (ifMatch.includes(current)) return;
  throw new AppError(
    'precondition_failed',
    `Task ${task.gid} has changed since that version was read: it is now ${current}. Read it again and retry.`,
    { headers: { ETag: current } },
  );
}
