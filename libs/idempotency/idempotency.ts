import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { AppError } from '../http/errors.ts';
import type {
  Execution,
  IdempotencyLayer,
  Operation,
  RecordSent,
  SentResult,
} from '../http/idempotency-layer.ts';
import type { Database } from '../storage/database.ts';
import { requestFingerprint } from './idempotency-fingerprint.ts';
import { seal, sealKey, unseal } from './idempotency-seal.ts';
import {
  claimKey,
  completeClaim,
  completeReadClaim,
  type KeyRef,
  purgeExpiredKeys,
  type ReadAnswerBound,
  releaseClaim,
  type StoredResponse,
} from './idempotency-store.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** How long a claim may stay in progress before a retry may presume its request dead. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
const PURGE_EVERY_MS = 10 * 60_000;
/**
 * The largest answer kept for replay, as JSON text, unless configured. Writes answer with one
 * small record, well under it; an analytics answer over it is sent but not kept: its key is
 * released, and a retry with the same key runs the (read-only) query again.
 */
export const MAX_STORED_RESPONSE_BYTES = 256 * 1024;
/**
 * How many analytics answers, and how many bytes of them, one principal keeps for replay
 * unless configured: a caller sending a fresh key with every query cannot fill the database.
 * Past either bound the principal's oldest answers go first; their keys then run again.
 */
export const DEFAULT_READ_ANSWER_BOUND: ReadAnswerBound = { maxKeys: 1_000, maxBytes: 16_777_216 };
/** Seconds a caller is asked to wait while the first request with its key still runs. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

export interface IdempotencyOptions {
  db: Kysely<Database>;
  now: () => Date;
  /** Seals stored responses to the master key (they carry new tokens). */
  masterKey?: string | undefined;
  /**
   * The master key being rotated out: answers it sealed still replay (new ones are sealed to
   * `masterKey`), so a retry across the rotation gets its answer instead of running twice.
   */
  masterKeyPrevious?: string | undefined;
  /** config.idempotencyMaxResponseBytes. @defaultValue MAX_STORED_RESPONSE_BYTES */
  maxResponseBytes?: number;
  /**
   * Answers of reads (a query) kept per principal: config.idempotencyQueryMaxKeys and
   * idempotencyQueryMaxBytes. @defaultValue DEFAULT_READ_ANSWER_BOUND
   */
  readAnswers?: ReadAnswerBound;
  /** Told of every replayed answer (a metric). */
  onReplay?: () => void;
}

/**
 * Stripe-style idempotency keys: the first request with a key runs and its response is kept
 * for 24 h; the same request again gets that response back, a different one a 422, and one
 * arriving while the first still runs a 409. A write's record is kept the whole 24 h; a query's
 * answer within its principal's bound (`readAnswers`), past which its oldest answers go first.
 */
export class Idempotency implements IdempotencyLayer {
  private readonly seal: Buffer | undefined;
  /** What opens a kept answer: the current seal key, then the one being rotated out. */
  private readonly openers: Buffer[];
  private nextPurgeAt = 0;

  private readonly options: IdempotencyOptions;

  constructor(options: IdempotencyOptions) {
    this.options = options;
    this.seal = options.masterKey ? sealKey(options.masterKey) : undefined;
    this.openers = [options.masterKey, options.masterKeyPrevious]
      .filter((key): key is string => Boolean(key))
      .map(sealKey);
  }

  async execute(
    op: Operation,
    work: (record: RecordSent | undefined) => Promise<SentResult>,
  ): Promise<Execution> {
    const owner = ownerOf(op.principal as Principal);
    const ref = op.key && owner ? { principal: owner, key: op.key, claimId: randomUUID() } : null;
    if (!ref) return { result: await work(undefined), replayed: false };
    const record: RecordSent = async (trx, sent) => {
      const kept = this.toStored(op, sent);
      // In the write's own transaction, so the write and its record commit together.
      if (trx) {
        if (!(await completeClaim(trx, ref, kept))) throw lostClaim();
        return;
      }
      // A request without a write of its own (a query) is recorded in a statement of its own,
      // within the principal's bound on kept answers; an answer too large to keep gives its key
      // back instead (see MAX_STORED_RESPONSE_BYTES).
      const bound = this.options.readAnswers ?? DEFAULT_READ_ANSWER_BOUND;
      const bytes = storedBytes(kept);
      // A streamed answer (an export) is never held whole, so it cannot be kept either.
      if (
        sent.stream !== undefined ||
        Buffer.byteLength(kept.body ?? '') >
          (this.options.maxResponseBytes ?? MAX_STORED_RESPONSE_BYTES) ||
        bytes > bound.maxBytes
      ) {
        await this.release(ref);
      } else await completeReadClaim(this.options.db, ref, kept, bytes, bound);
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
          { headers: { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECONDS) } },
        );
      case 'replay':
        this.options.onReplay?.();
        return { result: this.fromStored(claim.response), replayed: true };
    }
    try {
      return { result: await work(record), replayed: false };
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

  private toStored(op: Operation, result: SentResult): StoredResponse {
    const text = result.body === undefined ? null : JSON.stringify(result.body);
    const sealWith = (op.principal as Principal).kind === 'master' ? this.seal : undefined;
    return {
      status: result.status,
      // A replay keeps the first body as it was (its meta.request_id included) and says which
      // request that was; its own X-Request-ID is the new request's.
      headers: { ...result.headers, 'Original-Request-ID': op.requestId },
      body: text !== null && sealWith ? seal(text, sealWith) : text,
    };
  }

  private fromStored(response: StoredResponse): SentResult {
    if (response.body === null) return { status: response.status, headers: response.headers };
    const text = unsealWithAny(response.body, this.openers);
    if (text === undefined) {
      throw new AppError(
        'conflict',
        'The response kept for this Idempotency-Key can no longer be read; use a new key.',
      );
    }
    return { status: response.status, headers: response.headers, body: JSON.parse(text) };
  }
}

function unsealWithAny(text: string, keys: Buffer[]): string | undefined {
  if (keys.length === 0) return unseal(text, undefined);
  for (const key of keys) {
    const opened = unseal(text, key);
    if (opened !== undefined) return opened;
  }
  return undefined;
}

/** What a kept answer weighs against its principal's bound: its body and headers as stored. */
function storedBytes(response: StoredResponse): number {
  return (
    Buffer.byteLength(response.body ?? '') + Buffer.byteLength(JSON.stringify(response.headers))
  );
}

/** Keys are scoped per principal; anonymous callers have no scope to keep them in. */
function ownerOf(principal: Principal): string | undefined {
  if (principal.kind === 'token') return `token:${principal.id}`;
  if (principal.kind === 'master') return 'master';
  return undefined;
}

function lostClaim(): AppError {
  return new AppError(
    'conflict',
    'A retry with this Idempotency-Key took over while this request was running; nothing was changed.',
  );
}
