import { createHash } from 'node:crypto';
import { AppError } from '../../http/errors.ts';
import type { ChangeMark } from './answer-freshness.ts';
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

/** What an answer was computed from: a later reading tells how much of it still holds. */
export interface Reading {
  watermark: string;
  changes: ChangeMark | null;
}

/** An answer as the store keeps it: with the reading it reflects. */
export interface Kept<P> extends Lasting<P> {
  reading: Reading;
}

/** How much of an earlier answer a computation took over: all of it is a hit. */
export type Keeping = 'all' | 'some' | 'none';

export type Computed<P> = Lasting<P> & { store: boolean; kept: Keeping };

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
 * Names the projected facts a reading saw: the last logged change when there is one (a batch
 * fixed but not yet committed moves the watermark, not the facts), the watermark otherwise.
 */
const factsOf = ({ changes, watermark }: Reading) =>
  changes ? `changes ${changes.seq}:${changes.stamp}` : `watermark ${watermark}`;

/** Whether two readings saw the same projected facts. */
export const sameFacts = (a: Reading, b: Reading) => factsOf(a) === factsOf(b);

/**
 * Whole answers reused across requests: from the result cache while they hold (a dashboard's
 * refresh of `today` is a hit until a fact is projected or the clock crosses something the
 * answer depends on), and shared between identical queries in flight together, which run once.
 * One answer is kept per query, with the reading it reflects: once facts are projected or the
 * clock moves on, the computation is handed the kept answer and reuses what still holds of it
 * (kept-parts.ts); all of it is a hit. Sharing is per process: with several instances, each runs
 * a query at most once at a time.
 */
export class AnswerReuse {
  private readonly inFlight = new Map<string, Promise<Found<unknown>>>();
  /** Values of `keptWhile` (by key) and `keptOver` (by key and facts) being computed. */
  private readonly keeping = new Map<string, Promise<unknown>>();
  private readonly cache: ResultCache | null;

  constructor(cache: ResultCache | null) {
    this.cache = cache;
  }

  /** The key of everything but the clock and the facts: the plan's inputs. */
  static key(material: unknown): string {
    return createHash('sha256')
      .update(JSON.stringify(['answer', material]))
      .digest('base64url');
  }

  /**
   * The answer for `key` at clock reading `now` over the facts `reading` names: shared with an
   * identical query already under way over the same facts, kept, or computed by `compute`
   * (handed what was kept, then stored and shared). `fresh` (the caller sent
   * `Cache-Control: no-cache`) neither joins nor looks up. A caller registers before its first
   * await, so of identical queries arriving together only the first looks anything up.
   */
  async answer<P>(
    key: string,
    reading: Reading,
    now: number,
    compute: (kept: Kept<P> | undefined) => Promise<Computed<P>>,
    {
      fresh = false,
      signal,
      tags = [],
    }: {
      fresh?: boolean;
      signal?: AbortSignal;
      /** The businesses the answer reads (result-cache.ts `forget`). */
      tags?: readonly string[];
    } = {},
  ): Promise<{ parts: P; reuse: Reuse }> {
    const flight = `${key}\n${factsOf(reading)}`;
    const running = fresh
      ? undefined
      : (this.inFlight.get(flight) as Promise<Found<P>> | undefined);
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
    const finding = this.find(key, reading, now, compute, { fresh, tags });
    if (!this.inFlight.has(flight)) {
      this.inFlight.set(flight, finding);
      const forget = () => {
        if (this.inFlight.get(flight) === finding) this.inFlight.delete(flight);
      };
      finding.then(forget, forget);
    }
    const found = await finding;
    return { parts: found.lasting.parts, reuse: found.stored ? 'hit' : 'miss' };
  }

  private async find<P>(
    key: string,
    reading: Reading,
    now: number,
    compute: (kept: Kept<P> | undefined) => Promise<Computed<P>>,
    { fresh, tags }: { fresh: boolean; tags: readonly string[] },
  ): Promise<Found<P>> {
    let kept: Kept<P> | undefined;
    if (fresh) {
      this.cache?.bypassed();
    } else {
      kept = await this.cache?.get<Kept<P>>(key, { observe: false });
      if (kept && factsOf(kept.reading) === factsOf(reading) && holdsAt(kept, now)) {
        this.cache?.counted('hit');
        return { lasting: kept, stored: true };
      }
    }
    const { store, kept: keeping, ...lasting } = await compute(kept);
    if (!fresh)
      this.cache?.counted(keeping === 'all' ? 'hit' : keeping === 'some' ? 'partial' : 'miss');
    if (store) await this.cache?.set(key, { ...lasting, reading } satisfies Kept<P>, tags);
    return { lasting, stored: keeping === 'all' };
  }

  /**
   * A value kept under `key` and given while `holds` accepts it, whatever was projected since:
   * the caller bounds how stale it may be. `fresh` skips the lookup; what `compute` gives is
   * kept when `keep` accepts it, filed under `tags` (the businesses it reads), and shared with
   * callers asking for it meanwhile. `kept`: this caller computed nothing.
   */
  async keptWhile<T>(
    key: string,
    compute: () => Promise<T>,
    options: {
      holds: (value: T) => boolean;
      keep: (value: T) => boolean;
      fresh: boolean;
      tags: readonly string[];
    },
  ): Promise<{ value: T; kept: boolean }> {
    const found = options.fresh
      ? undefined
      : await this.cache?.get<{ value: T }>(key, { observe: false });
    if (found && options.holds(found.value)) return { value: found.value, kept: true };
    const running = options.fresh ? undefined : this.keeping.get(key);
    // The first caller's failure (its client gone) is not this one's: it computes its own.
    const shared = running && ((await running.catch(() => undefined)) as T | undefined);
    if (shared !== undefined && options.holds(shared)) return { value: shared, kept: true };
    const computing = (async () => {
      const value = await compute();
      if (options.keep(value)) await this.cache?.set(key, { value }, options.tags);
      return value;
    })();
    this.keeping.set(key, computing);
    const forget = () => {
      if (this.keeping.get(key) === computing) this.keeping.delete(key);
    };
    computing.then(forget, forget);
    return { value: await computing, kept: false };
  }

  /**
   * A figure of some businesses' facts alone, kept under `key` with the reading it was computed
   * over, and given again while `holds` says nothing projected since that reading can have
   * moved it (asked only when the readings differ; it is then kept with the later one, so the
   * next check starts there). Shared with callers asking over the same facts meanwhile;
   * `tags`: the businesses it reads.
   */
  async keptOver<T>(
    key: string,
    reading: Reading,
    compute: () => Promise<T>,
    {
      holds,
      tags,
    }: { holds: (value: T, since: Reading) => Promise<boolean>; tags: readonly string[] },
  ): Promise<T> {
    const found = await this.cache?.get<{ value: T; reading: Reading }>(key, { observe: false });
    if (found && sameFacts(found.reading, reading)) return found.value;
    if (found && (await holds(found.value, found.reading))) {
      await this.cache?.set(key, { value: found.value, reading }, tags);
      return found.value;
    }
    const flight = `${key}\n${factsOf(reading)}`;
    const running = this.keeping.get(flight) as Promise<T> | undefined;
    if (running) return running;
    const computing = (async () => {
      const value = await compute();
      await this.cache?.set(key, { value, reading }, tags);
      return value;
    })();
    this.keeping.set(flight, computing);
    const forget = () => {
      if (this.keeping.get(flight) === computing) this.keeping.delete(flight);
    };
    computing.then(forget, forget);
    return computing;
  }
}
