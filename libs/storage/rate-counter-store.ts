/** A key's count in its current fixed window. */
export interface RateCount {
  /** Requests charged in this window, this one included. */
  consumed: number;
  /** Until the window ends and the count starts again from zero. */
  msBeforeReset: number;
}

/**
 * Fixed-window request counters, one per key: in Redis, so every API instance charges the same
 * budget, or in process memory. A key's window starts with its first charge.
 */
export interface RateCounterStore {
  readonly kind: 'redis' | 'memory';
  /** Adds one to `key`'s count (or only reads it, `charge` false) in a window of `windowMs`. */
  count(key: string, windowMs: number, charge: boolean): Promise<RateCount>;
  /** For /readyz: `degraded` while the store is being bypassed. */
  check(): Promise<'ok' | 'degraded'>;
  close(): Promise<void>;
}

interface Window {
  consumed: number;
  endsAt: number;
}

/** Counters in this process: the embedded store, and every instance's own fallback. */
export class MemoryRateCounters implements RateCounterStore {
  readonly kind = 'memory';
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    // Ended windows would otherwise stay for every address ever seen.
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** The same as `count`, synchronously: cheap enough to run beside Redis on every request. */
  countNow(key: string, windowMs: number, charge: boolean): RateCount {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (!charge) return { consumed: 0, msBeforeReset: windowMs };
      window = { consumed: 0, endsAt: now + windowMs };
      this.windows.set(key, window);
    }
    if (charge) window.consumed += 1;
    return { consumed: window.consumed, msBeforeReset: window.endsAt - now };
  }

  async count(key: string, windowMs: number, charge: boolean): Promise<RateCount> {
    return this.countNow(key, windowMs, charge);
  }

  async check(): Promise<'ok'> {
    return 'ok';
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.windows.clear();
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
