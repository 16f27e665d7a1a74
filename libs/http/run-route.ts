import {
  type Execution,
  finalize,
  type IdempotencyLayer,
  type SentResult,
} from './idempotency-layer.ts';
import type { CheckedInput } from './read-input.ts';
import type { RequestContext, Route, TransactionOf } from './route.ts';
import { NO_UNIT, type Transactor, type UnitOfWork } from './unit-of-work.ts';

export interface RouteRunning {
  /** Opens the unit of work of a `write: true` route. */
  transact: Transactor<TransactionOf>;
  /** The Idempotency-Key layer for POST and PUT. */
  idempotency: IdempotencyLayer;
}

/**
 * How a route's handler runs, decided by whether it writes and whether the caller sent an
 * Idempotency-Key:
 * - `read`: a read without a key. The handler alone: nothing to record or replay.
 * - `keyed-read`: a read with a key (a POST /query). Through the Idempotency-Key layer, which
 *   may replay; a fresh answer is recorded on its own once the handler returns.
 * - `write`: a write, keyed or not. Through the layer, the handler inside a unit of work; a
 *   keyed answer is recorded in that same transaction, so the write and its record commit
 *   together.
 */
export type Strategy = 'read' | 'keyed-read' | 'write';

export function strategyOf(route: Route, key: string | undefined): Strategy {
  if (route.write) return 'write';
  return key === undefined ? 'read' : 'keyed-read';
}

/** Runs the route's handler on its checked input by the route's strategy. */
export async function runRoute(
  route: Route,
  input: CheckedInput,
  ctx: RequestContext,
  { transact, idempotency }: RouteRunning,
): Promise<Execution> {
  const { params, query, body, checked, key } = input;
  const answer = async (uow: UnitOfWork<TransactionOf>): Promise<SentResult> =>
    finalize(route, await route.handle({ params, query, body, checked, ctx, uow }));
  await route.before?.({ params, query, body, checked, ctx });
  const strategy = strategyOf(route, key);
  if (strategy === 'read') return { result: await answer(NO_UNIT), replayed: false };
  const operation = {
    route,
    principal: ctx.principal,
    key,
    params,
    query,
    body,
    requestId: ctx.requestId,
  };
  if (strategy === 'keyed-read') {
    return idempotency.execute(operation, async (record) => {
      const sent = await answer(NO_UNIT);
      await record?.(undefined, sent);
      return sent;
    });
  }
  return idempotency.execute(operation, (record) =>
    transact(async (uow) => {
      const sent = await answer(uow);
      await record?.(uow.trx, sent);
      return sent;
    }),
  );
}
