import { randomBytes } from 'node:crypto';
import { parseQuery, type QueryRequest } from '../analytics/parse/query-parser.ts';
import { type AnalyticsDeps, type QueryResponse, runQuery } from '../analytics/query.service.ts';
import { inRequest } from '../analytics/query-answer.ts';
import { allowedBusinesses, businessScope } from '../auth/access.ts';
import type { Principal } from '../auth/principal.ts';
import { AppError, ValidationError, type ValidationIssue } from '../http/errors.ts';
import { type JsonSchema, validate } from '../http/validation.ts';
import type { ViewRow } from './view.repository.ts';
import { gaugeSamples } from './view-gauges.ts';

/** What `POST` and `PUT /api/v1/views` take, once the schema has checked it. */
export interface ViewInput {
  name: string;
  query: QueryRequest;
  prometheus?: boolean;
}

/** A view as the API shows it. */
export interface ViewView {
  id: string;
  name: string;
  query: Record<string, unknown>;
  business?: string;
  businesses: string[];
  prometheus: boolean;
  created_at: string;
  updated_at: string;
}

export function generateViewId(): string {
  return `view_${randomBytes(8).toString('hex')}`;
}

export function toViewView(row: ViewRow): ViewView {
  const business = row.query.business;
  return {
    id: row.id,
    name: row.name,
    query: row.query,
    ...(typeof business === 'string' ? { business } : {}),
    businesses: row.businesses,
    prometheus: row.prometheus,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Issues located in a query body, moved to where this request put the query. */
export function relocated(error: unknown, at: Array<string | number>): unknown {
  if (!(error instanceof ValidationError)) return error;
  return new ValidationError(
    error.issues.map(
      (issue): ValidationIssue =>
        issue.loc[0] === 'body' ? { ...issue, loc: [...at, ...issue.loc.slice(1)] } : issue,
    ),
  );
}

/**
 * The checks `/query` runs past its schema (period and range rules, ordering, zones), so a view
 * is saved only if `/query` would take its query; issues are located under `["body","query"]`.
 */
export function checkViewQuery(deps: AnalyticsDeps, query: QueryRequest): void {
  try {
    parseQuery(query, { maxRows: deps.maxRows, ...(deps.zones ? { zones: deps.zones } : {}) });
  } catch (error) {
    throw relocated(error, ['body', 'query']);
  }
}

/**
 * An embed's locked filters checked as `/query` would check them after the view's own filters
 * (`base` of them): by the query schema (how many filters in all) and the parser; issues at
 * `["body","locked_filters",i,…]`.
 */
export function checkLockedFilters(
  deps: AnalyticsDeps,
  querySchema: JsonSchema,
  query: QueryRequest,
  base: number,
): void {
  const moved = (error: unknown) => {
    if (!(error instanceof ValidationError)) return error;
    return new ValidationError(
      error.issues.map((issue): ValidationIssue => {
        const [where, member, index, ...rest] = issue.loc;
        if (where !== 'body') return issue;
        if (member === 'filters' && typeof index === 'number' && index >= base) {
          return { ...issue, loc: ['body', 'locked_filters', index - base, ...rest] };
        }
        return { ...issue, loc: ['body', 'locked_filters'] };
      }),
    );
  };
  try {
    validate(querySchema, query, 'body');
    parseQuery(query, { maxRows: deps.maxRows, ...(deps.zones ? { zones: deps.zones } : {}) });
  } catch (error) {
    throw moved(error);
  }
}

/**
 * The businesses a view reads: the one its query names (a 404 when the token cannot read it),
 * else every business of the token saving it.
 */
export function viewBusinesses(principal: Principal, query: QueryRequest): string[] {
  const scope = businessScope(allowedBusinesses(principal), query.business);
  return [...(scope ?? [])];
}

/** A view the principal may see: one whose every business it can read. Else the 404 of a view that does not exist. */
export function visibleView(row: ViewRow | undefined, principal: Principal, id: string): ViewRow {
  const readable = allowedBusinesses(principal);
  if (!row || (readable !== null && !row.businesses.every((b) => readable.includes(b)))) {
    throw new AppError('not_found', `View ${id} does not exist.`);
  }
  return row;
}

/**
 * The view's query answered now, for its businesses, through `/query`'s own path: the same
 * result cache and coalescing, and one admission charged to `principal`.
 */
export async function answerView(
  deps: AnalyticsDeps,
  row: ViewRow,
  query: QueryRequest,
  at: { signal: AbortSignal; principal: string; useCache: boolean },
): Promise<QueryResponse> {
  try {
    return await runQuery(deps, query, { ...at, businesses: [...row.businesses] });
  } catch (error) {
    throw inRequest(error, query);
  }
}

/**
 * A view to be served on `/metrics/views` answered now: more series than `maxSeries` (rows ×
 * metrics with a value) is a 422 at `["body","prometheus"]`, since the scrape would cut it.
 */
export async function checkGaugeSeries(
  deps: AnalyticsDeps,
  query: QueryRequest,
  businesses: string[],
  at: { signal: AbortSignal; principal: string },
  maxSeries: number,
): Promise<void> {
  let answer: QueryResponse;
  try {
    answer = await runQuery(deps, query, { ...at, businesses, useCache: true });
  } catch (error) {
    throw relocated(inRequest(error, query), ['body', 'query']);
  }
  const series = gaugeSamples({ id: '' } as ViewRow, answer).length;
  if (series > maxSeries) {
    throw ValidationError.at(
      ['body', 'prometheus'],
      `The view's answer has ${series} series now; /metrics/views serves at most ${maxSeries} (CAIRN_VIEW_METRICS_MAX_SERIES). Narrow its query (fewer dimensions, a filter) or save it without prometheus.`,
      'too_many_series',
    );
  }
}
