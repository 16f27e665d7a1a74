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
  /**
   * Adds `units` to `key`'s count in a window of `windowMs` (0 only reads it; a negative number
   * gives back what a refused request was charged, never starting a window).
   */
  count(key: string, windowMs: number, units: number): Promise<RateCount>;
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
  countNow(key: string, windowMs: number, units: number): RateCount {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (units <= 0) return { consumed: 0, msBeforeReset: windowMs };
      window = { consumed: 0, endsAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.consumed = Math.max(0, window.consumed + units);
    return { consumed: window.consumed, msBeforeReset: window.endsAt - now };
  }

  async count(key: string, windowMs: number, units: number): Promise<RateCount> {
    return this.countNow(key, windowMs, units);
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
