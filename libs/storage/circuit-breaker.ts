export type BreakerState = 'closed' | 'open' | 'half_open';

export const BREAKER_STATES: readonly BreakerState[] = ['closed', 'open', 'half_open'];

/** Told of every change of state (and of the first one, `from` undefined) and of every call refused. */
export interface BreakerObserver {
  changed(change: {
    breaker: string;
    /** What the caller does instead while the breaker is not closed, for the operator's log. */
    whileOpen: string;
    from: BreakerState | undefined;
    to: BreakerState;
    error?: unknown;
  }): void;
  /** A call refused at once, without touching the server, because the breaker is open. */
  shortCircuited(breaker: string): void;
}

export interface BreakerOptions {
  /** Names the guarded store in metrics and logs, e.g. `redis_rate_limits`. */
  name: string;
  /** What callers do instead while it is open (logged once when it opens). */
  whileOpen: string;
  /**
   * A call not settled within this fails (`BreakerTimeoutError`) and counts as a failure; the
   * command itself stays with the client until the server answers or the connection drops.
   */
  timeoutMs: number;
  /** Consecutive failures (errors or timeouts) that open the breaker. @defaultValue 3 */
  failureThreshold: number;
  /** How long it stays open before one trial call may go through. @defaultValue 5000 */
  coolDownMs: number;
  observer?: BreakerObserver;
  /** The clock; tests fix it. */
  now?: () => number;
}

/** Thrown at once, instead of calling a server that has just been failing. */
export class BreakerOpenError extends Error {
  override name = 'BreakerOpenError';
  constructor(breaker: string) {
    super(`circuit breaker ${breaker} is open`);
  }
}

export class BreakerTimeoutError extends Error {
  override name = 'BreakerTimeoutError';
  constructor(breaker: string, ms: number) {
    super(`no answer within ${ms} ms (circuit breaker ${breaker})`);
  }
}

/**
 * A circuit breaker around one server connection. A hung server costs each call its whole
 * command timeout; after `failureThreshold` failures in a row the breaker opens and calls fail
 * at once with `BreakerOpenError`, so callers take their fallback in microseconds. After
 * `coolDownMs` one trial call goes through (half-open) while the others still fail fast: its
 * success closes the breaker, its failure opens it for another cool-down.
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialRunning = false;
  private readonly options: BreakerOptions;
  private readonly now: () => number;

  constructor(options: BreakerOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    options.observer?.changed({
      breaker: options.name,
      whileOpen: options.whileOpen,
      from: undefined,
      to: 'closed',
    });
  }

  get name(): string {
    return this.options.name;
  }

  /** Open or half-open once its cool-down has passed; a trial is not started by reading it. */
  get state(): BreakerState {
    if (this.current === 'open' && this.now() - this.openedAt >= this.options.coolDownMs) {
      return 'half_open';
    }
    return this.current;
  }

  /** Runs `work` unless the breaker is open; its outcome moves the breaker. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const trial = this.admit();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BreakerTimeoutError(this.options.name, this.options.timeoutMs)),
        this.options.timeoutMs,
      );
    });
    try {
      const result = await Promise.race([work(), timeout]);
      this.succeeded();
      return result;
    } catch (error) {
      this.failed(error, trial);
      throw error;
    } finally {
      clearTimeout(timer);
      if (trial) this.trialRunning = false;
    }
  }

  /**
   * The server has just proved itself outside any call (a new connection finished its
   * handshake): close now rather than after the cool-down. A server that hangs again opens it
   * again after `failureThreshold` failures.
   */
  recovered(): void {
    this.failures = 0;
    if (this.current !== 'closed' && !this.trialRunning) this.move('closed');
  }

  /** Whether the call may go: throws when open; returns true when it is the half-open trial. */
  private admit(): boolean {
    if (this.current === 'closed') return false;
    if (this.state === 'half_open' && !this.trialRunning) {
      this.trialRunning = true;
      this.move('half_open');
      return true;
    }
    this.options.observer?.shortCircuited(this.options.name);
    throw new BreakerOpenError(this.options.name);
  }

  private succeeded(): void {
    this.failures = 0;
    if (this.current !== 'closed') this.move('closed');
  }

  private failed(error: unknown, trial: boolean): void {
    this.failures += 1;
    // A call that was already under way when the breaker opened changes nothing more.
    if (this.current === 'closed' && this.failures >= this.options.failureThreshold) {
      this.openedAt = this.now();
      this.move('open', error);
    } else if (trial) {
      this.openedAt = this.now();
      this.move('open', error);
    }
  }

  private move(to: BreakerState, error?: unknown): void {
    const from = this.current;
    this.current = to;
    if (from === to) return;
    this.options.observer?.changed({
      breaker: this.options.name,
      whileOpen: this.options.whileOpen,
      from,
      to,
      ...(error === undefined ? {} : { error }),
    });
  }
}
