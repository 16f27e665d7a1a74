import type { Request, Response } from 'express';
import type { BodyOutcome } from './body-check.ts';
import type { BodyChecks } from './body-check-pool.ts';
import { NOT_JSON } from './client-errors.ts';
import { AppError, gatherIssues, ValidationError } from './errors.ts';
import { idempotencyKeyOf } from './idempotency-layer.ts';
import { type BodyReadHooks, bodyCharset, readJsonBody } from './json-body.ts';
import type { Route } from './route.ts';
import { validate } from './validation.ts';

/** A request's input, checked against its route: what the handler is called with. */
export interface CheckedInput {
  params: unknown;
  query: unknown;
  body: unknown;
  /** What the route's `checks` derived. */
  checked: Record<string, unknown>;
  /** The Idempotency-Key of a POST or PUT that sent one. */
  key: string | undefined;
}

export interface InputReading {
  /** Parses and validates bodies, large ones off the event loop; lends the slabs they are read into. */
  bodyChecks: BodyChecks;
  /** Told when a large body has been read (runtime tuning plugs in here, never the kernel). */
  hooks: BodyReadHooks;
}

/**
 * Reads and checks everything a request brings: the body (400 when it is not JSON), the
 * Idempotency-Key (400 when malformed), then path, query, body and the route's own checks
 * together, so one 422 lists every bad input.
 */
export async function readInput(
  req: Request,
  res: Response,
  route: Route,
  reading: InputReading,
): Promise<CheckedInput> {
  const read = await checkBody(req, res, route, reading);
  if (read.kind === 'malformed') throw new AppError('bad_request', NOT_JSON);
  const key = idempotencyKeyOf(req, route);
  // Express parses the query string again on every read of req.query.
  const rawQuery = req.query;
  let params: unknown = req.params;
  let query: unknown = {};
  let body: unknown;
  const checked: Record<string, unknown> = {};
  const checks = Object.entries(route.checks?.({ params: req.params, query: rawQuery }) ?? {});
  const issues = gatherIssues([
    () => {
      if (route.params) params = validate(route.params, { ...req.params }, 'path');
    },
    () => {
      if (route.query) query = validate(route.query, { ...rawQuery }, 'query');
    },
    () => {
      if (route.body && read.kind === 'invalid') throw new ValidationError(read.issues);
      if (route.body && read.kind === 'valid') body = read.value;
    },
    ...checks.map(([name, check]) => () => {
      checked[name] = (check as () => unknown)();
    }),
  ]);
  if (issues.length > 0) throw new ValidationError(issues);
  return { params, query, body, checked, key };
}

const NO_BODY: BodyOutcome = { kind: 'valid', value: undefined };

/**
 * The body read and checked. This function is the one owner of the body's memory: it gives the
 * slab back as soon as the check is done, whatever the check came to.
 */
async function checkBody(
  req: Request,
  res: Response,
  route: Route,
  { bodyChecks, hooks }: InputReading,
): Promise<BodyOutcome> {
  const { bytes, release } = await readJsonBody(req, res, bodyChecks, hooks);
  try {
    // Most reads carry no body and their route takes none: nothing to parse or check.
    if (bytes === undefined && !route.body) return NO_BODY;
    return await bodyChecks.check(route, { bytes, charset: bodyCharset(req) });
  } finally {
    release();
  }
}
