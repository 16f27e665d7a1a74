import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ResponseName } from './openapi-components.ts';
import type { UnitOfWork } from './unit-of-work.ts';
import type { JsonSchema } from './validation.ts';

/**
 * What the layers above the kernel put into it, by declaration merging (`declare module`):
 * `principal` (who calls, set on the request before routing), `scope` (what a route may ask
 * of a principal) and `transaction` (what a unit of work hands a write). The kernel passes
 * them along without knowing them, so it imports nothing above it.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging.
export interface KernelTypes {}
type Registered<K extends string, Fallback> = KernelTypes extends Record<K, infer T> ? T : Fallback;
export type PrincipalOf = Registered<'principal', unknown>;
export type ScopeOf = Registered<'scope', string>;
export type TransactionOf = Registered<'transaction', unknown>;

declare global {
  namespace Express {
    interface Request {
      /** Decided once per request by the authentication middleware, before any route runs. */
      principal: PrincipalOf;
    }
  }
}

export type Method = 'get' | 'post' | 'put' | 'delete';

export interface RequestContext {
  requestId: string;
  principal: PrincipalOf;
  /** Aborted when the client goes away before the answer is sent. */
  signal: AbortSignal;
  /** The request's headers, for those an operation reads itself (If-Match). */
  headers: IncomingHttpHeaders;
}

export interface RouteInput<P, Q, B, C = Record<string, never>> {
  params: P;
  query: Q;
  body: B;
  /** What the route's `checks` derived (a decoded cursor), so nothing is decoded twice. */
  checked: C;
  ctx: RequestContext;
  /**
   * The request's unit of work, on routes declared `write: true`: one transaction the handler
   * passes to its use case (`uow.trx`), committed after the handler returns together with the
   * request's idempotency record; effects registered with `uow.afterCommit` run only once it
   * has committed. Reading it on any other route is a programming error.
   */
  uow: UnitOfWork<TransactionOf>;
}

export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * An answer too large to hold, sent as it is read, in place of `body`; `headers` carry its
   * Content-Type. A failure before it is returned keeps its JSON shape; one while it is being
   * sent ends the response abnormally, so the caller sees a cut transfer, never a short file
   * that looks whole.
   */
  stream?: Readable;
}

/**
 * One HTTP operation: where it lives, what it accepts and what it needs. The same
 * declarations drive validation, the router and the API description.
 */
// biome-ignore lint/suspicious/noExplicitAny: a route table mixes handlers of different input types; each is checked where defined.
export interface Route<P = any, Q = any, B = any, C = any> {
  method: Method;
  /** Express path template, e.g. `/api/v1/tasks/:gid`; also the metrics label. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  /**
   * What the caller must hold, as the authorisation layer defines it (a token scope, 'token'
   * for any API token, 'master' for the master key); null for public operations.
   */
  scope: ScopeOf | null;
  /** The handler writes: the router opens a unit of work around it (see `RouteInput.uow`). */
  write?: true;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /**
   * Checks beyond the schemas (a signed cursor, a field list) on the raw path and query, each
   * named by the value it derives, which the handler receives as `checked`. They run even when
   * a schema check failed, so one answer lists every bad input.
   */
  checks?: (raw: { params: Record<string, unknown>; query: Record<string, unknown> }) => {
    [K in keyof C]: () => C[K];
  };
  /**
   * How many requests of the caller's rate-limit budget this one spends, from its checked body
   * (a batch of N queries: N); one without it. The extra units are charged once the body is
   * checked, through the router's `chargeMore` hook.
   */
  cost?: (body: B) => number;
  successStatus: number;
  response?: JsonSchema;
  /**
   * The success answer as files rather than JSON, for the API description: each media type's
   * schema, the first being the default.
   */
  files?: Record<string, JsonSchema>;
  /** Headers the success answer adds, for the API description. */
  successHeaders?: Record<string, { description: string; schema: JsonSchema }>;
  /** Failure answers particular to this operation, by status, replacing the platform's. */
  responses?: Record<string, ResponseName>;
  /**
   * How the operation uses entity tags, for the API description: `read` answers with an ETag
   * and honours If-None-Match (304); `write` honours If-Match (412); `issued` only sets an ETag.
   */
  etag?: 'read' | 'write' | 'issued';
  /**
   * `Cache-Control` of the success answer and of its 304, set by the router and published;
   * every other answer keeps the app's `no-store`.
   */
  cacheControl?: string;
  /**
   * Checks that read the engines, run before a write's unit of work opens: on a database of one
   * connection a read inside the handler would wait behind the handler's own transaction.
   */
  before?(input: Omit<RouteInput<P, Q, B, C>, 'uow'>): Promise<void>;
  handle(input: RouteInput<P, Q, B, C>): Promise<RouteResult>;
}

export function defineRoute<P, Q, B, C = Record<string, never>>(
  route: Route<P, Q, B, C>,
): Route<P, Q, B, C> {
  return route;
}
