import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { idempotencyReplays } from '../observability/metrics.ts';
import type { Database } from '../storage/database.ts';
import { AppError } from './errors.ts';
import { requestFingerprint } from './idempotency-fingerprint.ts';
import { seal, sealKey, unseal } from './idempotency-seal.ts';
import {
  claimKey,
  completeClaim,
  type KeyRef,
  purgeExpiredKeys,
  releaseClaim,
  type StoredResponse,
} from './idempotency-store.ts';
import type { BeforeCommit, Route, RouteResult } from './route.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** How long a claim may stay in progress before a retry may presume its request dead. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
const PURGE_EVERY_MS = 10 * 60_000;
const MAX_KEY_LENGTH = 255;

export interface IdempotencyOptions {
  db: Kysely<Database>;
  now: () => Date;
  /** Seals stored responses to the master key (they carry new tokens). */
  masterKey?: string | undefined;
}

export type SentResult = Required<Pick<RouteResult, 'status' | 'headers'>> & { body?: unknown };

export interface Execution {
  result: SentResult;
  replayed: boolean;
}

export interface Operation {
  route: Route;
  principal: Principal;
  key: string | undefined;
  params: unknown;
  query: unknown;
  body: unknown;
}

type RecordResponse = <T>(render: (result: T) => RouteResult) => BeforeCommit<T> | undefined;

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

/**
 * Stripe-style idempotency keys: the first request with a key runs and its response is kept
 * for 24 h; the same request again gets that response back, a different one a 422, and one
 * arriving while the first still runs a 409.
 */
export class Idempotency {
  private readonly seal: Buffer | undefined;
  private nextPurgeAt = 0;

  constructor(private readonly options: IdempotencyOptions) {
    this.seal = options.masterKey ? sealKey(options.masterKey) : undefined;
  }

  async execute(op: Operation, work: (record: RecordResponse) => Promise<RouteResult>) {
    const owner = ownerOf(op.principal);
    const ref = op.key && owner ? { principal: owner, key: op.key, claimId: randomUUID() } : null;
    if (!ref) {
      return { result: finalize(op.route, await work(() => undefined)), replayed: false };
    }
    let rendered: SentResult | undefined;
    let stored = false;
    const record: RecordResponse = (render) => async (trx, value) => {
      rendered = finalize(op.route, render(value));
      if (!(await completeClaim(trx, ref, this.toStored(op.principal, rendered))))
        throw lostClaim();
      stored = true;
    };

    const now = this.options.now();
    await this.purge(now);
    const fingerprint = requestFingerprint({
      method: op.route.method,
      path: op.route.path,
      params: op.params,
      query: op.query,
      body: op.body,
    });
    const claim = await claimKey(this.options.db, {
      ...ref,
      fingerprint,
      now,
      ttlMs: IDEMPOTENCY_TTL_MS,
      leaseMs: IDEMPOTENCY_LEASE_MS,
    });
    switch (claim.kind) {
      case 'mismatch':
        throw new AppError(
          'unprocessable',
          'This Idempotency-Key was already used with a different request; use a new key.',
        );
      case 'in_progress':
        throw new AppError(
          'conflict',
          'A request with this Idempotency-Key is still being processed; retry shortly.',
        );
      case 'replay':
        idempotencyReplays.inc();
        return { result: this.fromStored(claim.response), replayed: true };
    }
    try {
      const returned = finalize(op.route, await work(record));
      const sent = rendered ?? returned;
      // Routes without a write of their own (queries) are recorded here, in their own statement.
      if (!stored) await completeClaim(this.options.db, ref, this.toStored(op.principal, sent));
      return { result: sent, replayed: false };
    } catch (error) {
      await this.release(ref);
      throw error;
    }
  }

  private async release(ref: KeyRef): Promise<void> {
    try {
      await releaseClaim(this.options.db, ref);
    } catch {
      // The claim lapses after its lease; the original failure is what matters here.
    }
  }

  /** At most every few minutes per process; expired keys are also dropped lazily on reuse. */
  private async purge(now: Date): Promise<void> {
    if (now.getTime() < this.nextPurgeAt) return;
    this.nextPurgeAt = now.getTime() + PURGE_EVERY_MS;
    await purgeExpiredKeys(this.options.db, now);
  }

  private toStored(principal: Principal, result: SentResult): StoredResponse {
    const text = result.body === undefined ? null : JSON.stringify(result.body);
    const sealWith = principal.kind === 'master' ? this.seal : undefined;
    return {
      status: result.status,
      headers: result.headers,
      body: text !== null && sealWith ? seal(text, sealWith) : text,
    };
  }

  private fromStored(response: StoredResponse): SentResult {
    if (response.body === null) return { status: response.status, headers: response.headers };
    const text = unseal(response.body, this.seal);
    if (text === undefined) {
      throw new AppError(
        'conflict',
        'The response kept for this Idempotency-Key can no longer be read; use a new key.',
      );
    }
    return { status: response.status, headers: response.headers, body: JSON.parse(text) };
  }
}

/** Keys are scoped per principal; anonymous callers have no scope to keep them in. */
function ownerOf(principal: Principal): string | undefined {
  if (principal.kind === 'token') return `token:${principal.id}`;
  if (principal.kind === 'master') return 'master';
  return undefined;
}

function finalize(route: Route, result: RouteResult): SentResult {
  const status = result.status ?? route.successStatus;
  return {
    status,
    headers: result.headers ?? {},
    ...(status === 204 || result.body === undefined ? {} : { body: result.body }),
  };
}

function lostClaim(): AppError {
  return new AppError(
    'conflict',
    'A retry with this Idempotency-Key took over while this request was running; nothing was changed.',
  );
}
