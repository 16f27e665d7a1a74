import type { Request } from 'express';
import { AppError } from './errors.ts';
import type { PrincipalOf, Route, RouteResult, TransactionOf } from './route.ts';

const MAX_KEY_LENGTH = 255;

/** A handler's answer with its defaults applied: what is sent, and what a replay sends again. */
export type SentResult = Required<Pick<RouteResult, 'status' | 'headers'>> &
  Pick<RouteResult, 'body' | 'stream'>;

export interface Execution {
  result: SentResult;
  replayed: boolean;
}

/** One validated request, as the idempotency layer fingerprints it. */
export interface Operation {
  route: Route;
  /** This request's id; a replay names the first request's as `Original-Request-ID`. */
  requestId: string;
  principal: PrincipalOf;
  key: string | undefined;
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * Stores what a request sent under its Idempotency-Key: inside the write's own transaction
 * when the route has a unit of work (so the write and its record commit together), on its own
 * otherwise.
 */
export type RecordSent = (trx: TransactionOf | undefined, sent: SentResult) => Promise<void>;

/**
 * What the router asks of the Idempotency-Key layer (plugged in from `libs/idempotency`): run
 * `work` for a fresh request, handing it the recorder when there is a key to record under, or
 * answer without running it (a replay, a conflict).
 */
export interface IdempotencyLayer {
  execute(
    op: Operation,
    work: (record: RecordSent | undefined) => Promise<SentResult>,
  ): Promise<Execution>;
}

/** Without keys: every request runs once and nothing is kept. */
export const NO_IDEMPOTENCY: IdempotencyLayer = {
  execute: async (_op, work) => ({ result: await work(undefined), replayed: false }),
};

/** Reads the Idempotency-Key header of a POST or PUT; other methods ignore it. */
export function idempotencyKeyOf(req: Request, route: Route): string | undefined {
  if (route.method !== 'post' && route.method !== 'put') return undefined;
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new AppError(
      'bad_request',
      `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} characters long.`,
    );
  }
  return key;
}

/** The status, headers and body a handler's result sends. */
export function finalize(route: Route, result: RouteResult): SentResult {
  const status = result.status ?? route.successStatus;
  return {
    status,
    headers: result.headers ?? {},
    ...(status === 204 || result.body === undefined ? {} : { body: result.body }),
    ...(result.stream ? { stream: result.stream } : {}),
  };
}
