import { createHmac, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../platform/errors.ts';

/** Which listing a cursor belongs to: a dependents cursor means nothing to a dependencies list. */
export type EdgeListing = 'dependents' | 'dependencies';

interface CursorPosition {
  listing: EdgeListing;
  taskGid: string;
  /** The id of the last edge already returned; the next page starts after it. */
  afterId: number;
}

const VERSION = 'c1';

/**
 * An opaque, tamper-evident keyset position: `c1.<payload>.<mac>`, base64url. The MAC covers
 * the listing and the task gid, so a cursor taken from another task or listing is refused
 * rather than silently paging somewhere else.
 */
export function encodeCursor(key: Buffer, position: CursorPosition): string {
  const payload = Buffer.from(
    JSON.stringify([position.listing, position.taskGid, position.afterId]),
  ).toString('base64url');
  return `${VERSION}.${payload}.${mac(key, payload)}`;
}

/** The position a cursor names, or a 422 at `["query","offset"]`. */
export function decodeCursor(
  key: Buffer,
  cursor: string,
  expected: { listing: EdgeListing; taskGid: string },
): number {
  const invalid = (why: string) =>
    ValidationError.at(['query', 'offset'], `Invalid cursor: ${why}`, 'value_error');
  const [version, payload, signature, ...rest] = cursor.split('.');
  if (version !== VERSION || !payload || !signature || rest.length > 0) {
    throw invalid('use next_offset from the previous page unchanged');
  }
  const expectedMac = Buffer.from(mac(key, payload));
  const given = Buffer.from(signature);
  if (given.length !== expectedMac.length || !timingSafeEqual(given, expectedMac)) {
    throw invalid('it has been altered or was not issued by this service');
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid('it has been altered or was not issued by this service');
  }
  const [listing, taskGid, afterId] = Array.isArray(decoded) ? decoded : [];
  if (listing !== expected.listing || taskGid !== expected.taskGid) {
    throw invalid(`it belongs to another listing, not the ${expected.listing} of this task`);
  }
  if (!Number.isSafeInteger(afterId) || afterId < 0) throw invalid('bad position');
  return afterId as number;
}

function mac(key: Buffer, payload: string): string {
  // 128 bits of the HMAC are plenty against forgery and keep cursors short.
  return createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url');
}
