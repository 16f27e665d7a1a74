import { randomBytes } from 'node:crypto';
import type { QueryFilter, QueryRequest } from '../analytics/parse/query-parser.ts';
import { hashSecret } from '../auth/token-secret.ts';
import { AppError, ValidationError } from '../http/errors.ts';
import { type JsonSchema, validate } from '../http/validation.ts';
import type { Db } from '../storage/database.ts';
import { type EmbedRow, findEmbedByHash, insertEmbed, type ViewRow } from './view.repository.ts';
import { relocated } from './view.service.ts';

/** Recognisable in logs and secret scanners, and never taken for an API token. */
export const EMBED_TOKEN_PREFIX = 'cairn_embed_';
const DAY_MS = 86_400_000;

export interface EmbedInput {
  expires_in_days: number;
  locked_filters?: QueryFilter[];
  allowed_origins?: string[];
}

export interface IssuedEmbed {
  id: string;
  embed_token: string;
  url: string;
  expires_at: string;
  locked_filters: QueryFilter[];
  allowed_origins: string[];
}

export const embedUrl = (token: string): string => `/embed/${token}`;

/** Random (256 bits), returned once; only its SHA-256 is stored, as for API tokens. */
export async function issueEmbed(
  db: Db,
  view: ViewRow,
  input: EmbedInput,
  now: Date,
): Promise<IssuedEmbed> {
  const token = `${EMBED_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const row = await insertEmbed(db, {
    id: `emb_${randomBytes(8).toString('hex')}`,
    view_id: view.id,
    token_hash: hashSecret(token),
    locked_filters: input.locked_filters ?? [],
    allowed_origins: input.allowed_origins ?? [],
    created_at: now,
    expires_at: new Date(now.getTime() + input.expires_in_days * DAY_MS),
  });
  return {
    id: row.id,
    embed_token: token,
    url: embedUrl(token),
    expires_at: row.expires_at.toISOString(),
    locked_filters: row.locked_filters as QueryFilter[],
    allowed_origins: row.allowed_origins,
  };
}

export function embedState(row: EmbedRow, now: Date): 'active' | 'expired' | 'revoked' {
  if (row.revoked_at !== null) return 'revoked';
  return row.expires_at.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** An embed as its view's listing shows it: never its token. */
export function toListedEmbed(row: EmbedRow, now: Date) {
  return {
    id: row.id,
    expires_at: row.expires_at.toISOString(),
    locked_filters: row.locked_filters,
    allowed_origins: row.allowed_origins,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    state: embedState(row, now),
  };
}

/**
 * The embed and view a token opens. Unknown, revoked and expired are one 401, in the same
 * words, so a guess learns nothing.
 */
export async function openEmbed(
  db: Db,
  token: string,
  now: Date,
): Promise<{ embed: EmbedRow; view: ViewRow }> {
  const found = token.startsWith(EMBED_TOKEN_PREFIX)
    ? await findEmbedByHash(db, hashSecret(token))
    : undefined;
  if (!found || embedState(found.embed, now) !== 'active') {
    throw new AppError('unauthorized', 'This embed link is unknown, revoked or expired.');
  }
  return found;
}

/** Every dimension a filter list names, inside `any` groups too. */
export function filteredDimensions(filters: readonly QueryFilter[]): Set<string> {
  const names = new Set<string>();
  const walk = (list: readonly QueryFilter[]) => {
    for (const filter of list) {
      if ('any' in filter) walk(filter.any);
      else names.add(filter.dimension);
    }
  };
  walk(filters);
  return names;
}

/** The view's query with the embed's locked filters and then the viewer's own, all of which hold. */
export function embedQuery(
  view: ViewRow,
  locked: readonly QueryFilter[],
  extra: readonly QueryFilter[],
): QueryRequest {
  const query = view.query as unknown as QueryRequest;
  const filters = [...(query.filters ?? []), ...locked, ...extra];
  return { ...query, ...(filters.length > 0 ? { filters } : {}) };
}

/**
 * The viewer's `q`: JSON holding `filters` and nothing else (anything else is a 403: an embed
 * shows its view, it does not run other queries), none on a locked dimension (403). Filters
 * that are not filters are the 422 `/query` would give, under `["query","q"]`.
 */
export function viewerFilters(
  q: string | undefined,
  /** `{filters}` with `/query`'s filter schema: built once, compiled once. */
  viewerSchema: JsonSchema,
  locked: readonly QueryFilter[],
): QueryFilter[] {
  if (q === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(q);
  } catch (error) {
    throw ValidationError.at(
      ['query', 'q'],
      `Invalid JSON: ${(error as Error).message}`,
      'json_invalid',
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ValidationError.at(['query', 'q'], 'Input should be an object', 'model_attributes_type');
  }
  const others = Object.keys(value).filter((key) => key !== 'filters');
  if (others.length > 0) {
    throw new AppError(
      'forbidden',
      `An embed takes only filters that narrow its view, not ${others.map((k) => `'${k}'`).join(', ')}.`,
    );
  }
  let filters: QueryFilter[];
  try {
    filters = validate<{ filters?: QueryFilter[] }>(viewerSchema, value, 'body').filters ?? [];
  } catch (error) {
    throw relocated(error, ['query', 'q']);
  }
  const fixed = filteredDimensions(locked);
  const touched = [...filteredDimensions(filters)].filter((name) => fixed.has(name));
  if (touched.length > 0) {
    throw new AppError(
      'forbidden',
      `The embed locks ${touched.map((n) => `'${n}'`).join(', ')}: its filters there cannot be changed.`,
    );
  }
  return filters;
}
