import { createHash } from 'node:crypto';
import type { ResultStore } from '../../storage/result-store.ts';
import { inSpan } from '../../tracing/tracing.ts';
import type { CompiledQuery } from '../compile/query-compiler.ts';

export interface ResultCacheObserver {
  hit?(): void;
  miss?(): void;
  evicted?(count: number): void;
  /**
   * A query computed in part: what still held of its kept answer (closed buckets, settled
   * parts) was reused and only the rest ran. Also counted as a miss.
   */
  partial?(): void;
  /** An identical query was under way: its answer was shared, nothing looked up or run. */
  coalesced?(): void;
  /** The store failed; the query went on as a miss. */
  failed?(error: unknown): void;
}

/**
 * Engine answers keyed on the compiled statement, its parameters and the projection watermark.
 * New facts move the watermark, so an answer computed before them is never found again: the
 * cache cannot answer stale, and old entries simply age out of the byte bound. A failing store
 * costs a miss, never the query.
 */
export class ResultCache {
  private readonly store: ResultStore;
  private readonly observer: ResultCacheObserver;

  constructor(store: ResultStore, observer: ResultCacheObserver = {}) {
    this.store = store;
    this.observer = observer;
  }

  get kind(): ResultStore['kind'] {
    return this.store.kind;
  }

  static key(compiled: CompiledQuery, watermark: string): string {
    return createHash('sha256')
      .update(JSON.stringify([compiled.sql, compiled.params, watermark]))
      .digest('base64url');
  }

  /** `observe: false` keeps a lookup out of the hit and miss counts (an answer's side figures). */
  get<T>(key: string, { observe = true } = {}): Promise<T | undefined> {
    return inSpan(
      'cache lookup',
      { attributes: { 'cairn.cache.store': this.store.kind } },
      async (span) => {
        let text: string | undefined;
        try {
          text = await this.store.get(key);
        } catch (error) {
          this.observer.failed?.(error);
        }
        span?.setAttribute('cairn.cache.hit', text !== undefined);
        if (text === undefined) {
          if (observe) this.observer.miss?.();
          return undefined;
        }
        if (observe) this.observer.hit?.();
        return JSON.parse(text) as T;
      },
    );
  }

  /** What a query's lookup came to, once known (lookups of kept answers are not counted). */
  counted(outcome: 'hit' | 'miss' | 'partial'): void {
    if (outcome === 'hit') this.observer.hit?.();
    else this.observer.miss?.();
    if (outcome === 'partial') this.observer.partial?.();
  }

  /** The caller asked for a fresh answer: counted as a miss. */
  bypassed(): void {
    this.observer.miss?.();
  }

  /** A query answered with an identical one's answer, computed while it waited. */
  coalesced(): void {
    this.observer.coalesced?.();
  }

  /** `tags`: the businesses the value was read from (see `forget`). */
  async set(key: string, value: unknown, tags: readonly string[] = []): Promise<void> {
    try {
      const evicted = await this.store.set(key, JSON.stringify(value), tags);
      if (evicted > 0) this.observer.evicted?.(evicted);
    } catch (error) {
      this.observer.failed?.(error);
    }
  }

  /**
   * A side figure of the facts, kept under `key` (which names the watermark, so a newly
   * projected fact retires it) and served while `holds` accepts it, outside the hit and miss
   * counts. An `undefined` figure (one read in part) is returned but not kept.
   */
  async remember<T>(
    key: string,
    compute: () => Promise<T>,
    {
      holds = () => true,
      tags = [],
    }: { holds?: (kept: T) => boolean; tags?: readonly string[] } = {},
  ): Promise<T> {
    const kept = await this.get<{ value: T }>(key, { observe: false });
    if (kept && holds(kept.value)) return kept.value;
    const value = await compute();
    if (value !== undefined) await this.set(key, { value }, tags);
    return value;
  }

  /**
   * Forgets every answer read from `business` (and those read from every business), and only
   * those: another business's dashboards keep their hits. A failing store is reported and left
   * to age its entries out (the change the erasure logged keeps them from being served).
   */
  async forget(business: string): Promise<void> {
    try {
      await this.store.forget(business);
    } catch (error) {
      this.observer.failed?.(error);
    }
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
