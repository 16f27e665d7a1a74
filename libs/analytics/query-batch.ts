import { AppError, ValidationError } from '../http/errors.ts';
import { toProblem } from '../http/problem.ts';
import type { RequestContext } from '../http/route.ts';
import { type JsonSchema, validate } from '../http/validation.ts';
import { canonicalJson } from '../idempotency/idempotency-fingerprint.ts';
import { classifyClickHouseError } from '../storage/clickhouse-errors.ts';
import { classifyPostgresError } from '../storage/postgres-errors.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import type { AnalyticsDeps } from './query.service.ts';
import { answer } from './query-answer.ts';

export const BATCH_PATH = '/api/v1/query/batch';

export interface BatchRequest {
  queries: unknown[];
}

/** One query's answer in a batch: what `POST /query` would send, with its status. */
export interface BatchItem {
  status: number;
  data?: Record<string, unknown>[];
  metadata?: Record<string, unknown>;
  warnings?: unknown[];
  /** The 422 body (`{detail}`) or the problem `/query` would have answered. */
  error?: unknown;
}

// What the error middleware asks of the engines, for failures of the query's own reads: the
// projection's progress (Postgres) and the statements (ClickHouse).
const ENGINE_ERRORS = [classifyPostgresError, classifyClickHouseError];

/**
 * A failure as `/query` would answer it, as one item; anything the error middleware would
 * answer with a 500 fails the whole batch there, so it is logged like any other.
 */
function failed(error: unknown, requestId: string): BatchItem {
  if (error instanceof ValidationError) return { status: 422, error: { detail: error.issues } };
  const known =
    error instanceof AppError
      ? error
      : ENGINE_ERRORS.reduce<AppError | undefined>((found, f) => found ?? f(error), undefined);
  if (!known) throw error;
  return { status: known.status, error: toProblem(known, BATCH_PATH, requestId) };
}

/** Checks one query against `/query`'s body schema and runs it, as `/query` would. */
async function answerOne(
  deps: AnalyticsDeps,
  body: QueryRequest,
  ctx: RequestContext,
): Promise<BatchItem> {
  try {
    const { data, metadata, warnings } = await answer(deps, body, ctx);
    return { status: 200, data, metadata, ...(warnings ? { warnings } : {}) };
  } catch (error) {
    return failed(error, ctx.requestId);
  }
}

/**
 * Each query answered in order, each with its own admission. They run one after another: a
 * batch holds at most one of the caller's query slots, so it neither fills the caller's queue
 * (a refusal per item) nor crowds out other callers. Identical queries, once checked and their
 * defaults filled in, run once and share the answer.
 */
export async function answerBatch(
  deps: AnalyticsDeps,
  querySchema: JsonSchema,
  queries: unknown[],
  ctx: RequestContext,
): Promise<BatchItem[]> {
  const answered = new Map<string, BatchItem>();
  const items: BatchItem[] = [];
  for (const query of queries) {
    let body: QueryRequest;
    try {
      body = validate<QueryRequest>(querySchema, query, 'body');
    } catch (error) {
      items.push(failed(error, ctx.requestId));
      continue;
    }
    const key = canonicalJson(body);
    let item = answered.get(key);
    if (!item) {
      item = await answerOne(deps, body, ctx);
      answered.set(key, item);
    }
    items.push(item);
  }
  return items;
}
