import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  type KeyObject,
  randomFillSync,
} from 'node:crypto';
import { ValidationError } from '../http/errors.ts';

/** Which listing a cursor belongs to: a dependents cursor means nothing to a dependencies list. */
export type EdgeListing = 'dependents' | 'dependencies';
/**
 * The direct listing pages by edge id; the transitive one (`depth=all`, suffix `:all`) by task
 * gid. Each cursor names its own walk, so neither is taken for the other.
 */
export type CursorWalk = EdgeListing | `${EdgeListing}:all`;

interface CursorPosition {
  listing: CursorWalk;
  taskGid: string;
  /** The last edge id (direct) or task gid (transitive) already returned; the next page follows it. */
  afterId: number | string;
}

const GID_TEXT = /^[A-Za-z0-9_-]{1,64}$/;

const VERSION = 'c2';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * An opaque keyset position: `c2.<iv|ciphertext|tag>`, base64url, sealed with AES-256-GCM. The
 * position (a global edge id, or a gid) is encrypted, not only signed, so a cursor tells its
 * holder nothing about how many edges exist; the listing and task gid are authenticated as
 * associated data, so a cursor taken from another task or listing is refused rather than
 * paging somewhere else.
 */
export function encodeCursor(key: Buffer, position: CursorPosition): string {
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', keyObject(key), iv);
  cipher.setAAD(associatedData(position));
  const plain = Buffer.from(JSON.stringify(position.afterId));
  const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${sealed.toString('base64url')}`;
}

/**
 * The position a cursor names, or a 422 at `["query","offset"]`. Several keys during a rotation:
 * the current one first, then those being rotated out.
 */
export function decodeCursor(
  keys: Buffer | readonly Buffer[],
  cursor: string,
  expected: { listing: CursorWalk; taskGid: string },
): number | string {
  const invalid = (why: string) =>
    ValidationError.at(['query', 'offset'], `Invalid cursor: ${why}`, 'value_error');
  const [version, payload, ...rest] = cursor.split('.');
  if (version !== VERSION || !payload || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload)) {
    throw invalid('use next_offset from the previous page unchanged');
  }
  const sealed = Buffer.from(payload, 'base64url');
  if (sealed.length <= IV_BYTES + TAG_BYTES) {
    throw invalid('use next_offset from the previous page unchanged');
  }
  let afterId: unknown = NOT_OPENED;
  for (const key of Buffer.isBuffer(keys) ? [keys] : keys) {
    afterId = open(key, sealed, expected);
    if (afterId !== NOT_OPENED) break;
  }
  if (afterId === NOT_OPENED) {
    throw invalid(
      `it has been altered, was not issued by this service, or belongs to another listing than the ${expected.listing.replace(':all', ' (depth=all)')} of this task`,
    );
  }
  const transitive = expected.listing.endsWith(':all');
  const valid = transitive
    ? typeof afterId === 'string' && GID_TEXT.test(afterId)
    : Number.isSafeInteger(afterId) && (afterId as number) >= 0;
  if (!valid) throw invalid('bad position');
  return afterId as number | string;
}

const NOT_OPENED = Symbol('not opened');

/** The position sealed under `key`, or NOT_OPENED when this key did not seal it for this listing. */
function open(
  key: Buffer,
  sealed: Buffer,
  expected: { listing: CursorWalk; taskGid: string },
): unknown {
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyObject(key), sealed.subarray(0, IV_BYTES));
    decipher.setAAD(associatedData(expected));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(plain.toString('utf8'));
  } catch {
    return NOT_OPENED;
  }
}

/** A raw key is imported anew by every cipher made from it; a page makes one or two. */
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObject(key: Buffer): KeyObject {
  let imported = keyObjects.get(key);
  if (!imported) {
    imported = createSecretKey(key);
    keyObjects.set(key, imported);
  }
  return imported;
}

/**
 * Random IVs, drawn from the system's generator a few hundred at a time rather than one call
 * per page. Each is handed out once: the pool is refilled before any byte of it is reused.
 */
const ivPool = Buffer.alloc(IV_BYTES * 256);
let ivAt = ivPool.length;
function nextIv(): Buffer {
  if (ivAt + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivAt = 0;
  }
  ivAt += IV_BYTES;
  return Buffer.from(ivPool.subarray(ivAt - IV_BYTES, ivAt));
}

function associatedData(position: { listing: CursorWalk; taskGid: string }): Buffer {
  return Buffer.from(JSON.stringify([VERSION, position.listing, position.taskGid]));
}
