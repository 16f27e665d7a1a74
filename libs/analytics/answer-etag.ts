import { createHash } from 'node:crypto';
import type { QueryResponse } from './query.service.ts';

/**
 * Members of `metadata` that differ between two answers holding the same numbers: how long it
 * took, what ran it, how fresh the projection was and whether a cache gave it. An entity tag
 * over them would change on every request and no refresh could ever be a 304.
 */
export const VOLATILE_METADATA = [
  'elapsed_ms',
  'query_id',
  'data_as_of',
  'cache',
  'rows_read',
  'bytes_read',
] as const;

/**
 * A strong entity tag for an answer of `/query`: the SHA-256 of the answer without its volatile
 * metadata, base64url, quoted. Equal tags mean byte-equal answers once those members are left
 * out, which is what a strong validator promises (RFC 9110 §8.8.1).
 */
export function answerEtag(answer: QueryResponse): string {
  const metadata: Record<string, unknown> = { ...answer.metadata };
  for (const member of VOLATILE_METADATA) delete metadata[member];
  const digest = createHash('sha256')
    .update(JSON.stringify({ ...answer, metadata }))
    .digest('base64url');
  return `"${digest}"`;
}
