import { createHash } from 'node:crypto';
import { AppError } from '../../http/errors.ts';
import type { ResultCache } from './result-cache.ts';

/** What one query's statements answered, kept with the span of clock readings it holds for. */
export interface Lasting<P> {
  parts: P;
  /** The clock reading it was computed at (epoch ms). */
  computedAt: number;
  /** The first clock reading it no longer holds at (epoch ms, excluded): see answer-validity.ts. */
  validUntil: number;
}

export type Reuse = 'hit' | 'miss' | 'coalesced';

/** An answer under way: whether it came from the store, or was computed. */
interface Found<P> {
  lasting: Lasting<P>;
  stored: boolean;
}

/** `work`, or the signal's abort as a cancelled request (what an admission wait answers). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const cancelled = () => new AppError('unavailable', 'The request was cancelled.');
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const holdsAt = (lasting: Lasting<unknown>, now: number) =>
  lasting.computedAt <= now && now < lasting.validUntil;

/**
 * Whole answers reused across requests: from the result cache while they hold (a dashboard's
 * refresh of `today` is a hit until a fact is projected or the clock crosses something the
 * answer depends on), and shared between identical queries in flight together, which run once.
 * Sharing is per process: with several instances, each runs a query at most once at a time.
 */
export class AnswerReuse {
  private readonly inFlight = new Map<string, Promise<Found<unknown>>>();
  private readonly cache: ResultCache | null;

  constructor(cache: ResultCache | null) {
    this.cache = cache;
  }

  /** The key of everything but the clock: the plan's inputs and the projection watermark. */
  static key(material: unknown, watermark: string): string {
    return createHash('sha256')
      .update(JSON.stringify(['answer', material, watermark]))
      .digest('base64url');
  }

  /**
   * The answer for `key` at clock reading `now`: shared with an identical query already under
   * way, stored, or computed by `compute` (then stored and shared). `fresh` (the caller sent
   * `Cache-Control: no-cache`) neither joins nor looks up. A caller registers before its first
   * await, so of identical queries arriving together only the first looks anything up.
   */
  async answer<P>(
    key: string,
    now: number,
    compute: () => Promise<Lasting<P> & { store: boolean }>,
    { fresh = false, signal }: { fresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<{ parts: P; reuse: Reuse }> {
    const running = fresh ? undefined : (this.inFlight.get(key) as Promise<Found<P>> | undefined);
    if (running) {
      // The first caller's failure (its client gone, its budget spent) is not this one's; this
      // one's client leaving ends its own wait, whatever the first caller's.
      const shared = await untilAborted(
        running.catch(() => undefined),
        signal,
      );
      if (shared && holdsAt(shared.lasting, now)) {
        if (!shared.stored) this.cache?.coalesced();
        return { parts: shared.lasting.parts, reuse: shared.stored ? 'hit' : 'coalesced' };
      }
    }
    const finding = this.find(key, now, compute, fresh);
    if (!this.inFlight.has(key)) {
      this.inFlight.set(key, finding);
      const forget = () => {
        if (this.inFlight.get(key) === finding) this.inFlight.delete(key);
      };
      finding.then(forget, forget);
    }
    const found = await finding;
    return { parts: found.lasting.parts, reuse: found.stored ? 'hit' : 'miss' };
  }

  private async find<P>(
    key: string,
    now: number,
    compute: () => Promise<Lasting<P> & { store: boolean }>,
    fresh: boolean,
  ): Promise<Found<P>> {
    if (fresh) {
      this.cache?.bypassed();
    } else {
      const stored = await this.cache?.get<Lasting<P>>(key);
      if (stored && holdsAt(stored, now)) return { lasting: stored, stored: true };
    }
    const { store, ...lasting } = await compute();
    if (store) await this.cache?.set(key, lasting);
    return { lasting, stored: false };
  }

  /** A figure that depends on the facts alone, kept under `key` (which names the watermark). */
  async remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const kept = await this.cache?.get<{ value: T }>(key, { observe: false });
    if (kept) return kept.value;
    const value = await compute();
    await this.cache?.set(key, { value });
    return value;
  }
}
