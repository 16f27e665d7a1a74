import { createHash } from 'node:crypto';
import type { EmbedCaller } from './rate-limit.ts';

/** `/embed/{embed_token}` and everything under it. */
const EMBED_PATH = /^\/embed\/([^/]+)/;

/**
 * The embed token a path carries, as the rate limiter's caller: a digest only (first 128 bits
 * of its SHA-256), so the token reaches no counter key. Undefined off the embed paths.
 */
export function embedCaller(path: string): EmbedCaller | undefined {
  const token = EMBED_PATH.exec(path)?.[1];
  if (token === undefined) return undefined;
  return { kind: 'embed', digest: createHash('sha256').update(token).digest('hex').slice(0, 32) };
}
