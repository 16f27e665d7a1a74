import { AppError } from '../http/errors.ts';

export interface AdmissionLimits {
  /** Queries running at once, every principal together. */
  total: number;
  /** Queries one principal may have running at once. */
  perPrincipal: number;
  /** Queries one principal may have waiting beyond those running; the next one is refused. */
  queuePerPrincipal: number;
  /** How long a query may wait for a slot. */
  maxWaitMs: number;
}

export type RejectReason = 'queue_full' | 'wait_expired' | 'shutting_down';

export interface AdmissionObserver {
  rejected?(reason: RejectReason): void;
  /** How long an admitted query waited for its slot. */
  waited?(ms: number): void;
}

interface Waiter {
  admit(): void;
  fail(error: AppError): void;
}

interface Tenant {
  running: number;
  queue: Waiter[];
  /** Admission sequence number of this tenant's latest query: the fairness tie-breaker. */
  lastServed: number;
}

/** A first guess at a query's run time, before any has finished. */
const INITIAL_RUN_MS = 500;

/**
 * Admission control for analytics queries: caps per principal and overall, and a queue that is
 * fair across principals. A freed slot goes to the waiting principal with the fewest queries
 * running, then to the one served longest ago, so a principal's backlog never puts another
 * principal behind more than the queries already running. A query that cannot get a slot within
 * the wait bound, or whose principal already has a full queue, is refused with `Retry-After`:
 * 429 when the principal's own queries are what holds it back, 503 when the service is busy.
 */
export class Admission {
  private readonly tenants = new Map<string, Tenant>();
  private running = 0;
  private queued = 0;
  private served = 0;
  private closed = false;
  /** Moving average of run times, for an honest Retry-After. */
  private averageRunMs = INITIAL_RUN_MS;

  readonly limits: AdmissionLimits;
  private readonly observer: AdmissionObserver;

  constructor(limits: AdmissionLimits, observer: AdmissionObserver = {}) {
    this.limits = limits;
    this.observer = observer;
  }

  get state(): { running: number; queued: number } {
    return { running: this.running, queued: this.queued };
  }

  /** Runs `work` once a slot is free; refuses with a problem when none is free in time. */
  async run<T>(principal: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(principal, signal);
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.averageRunMs = 0.8 * this.averageRunMs + 0.2 * (performance.now() - started);
      this.release(principal);
    }
  }

  /** Refuses every waiting query and any that arrives later: the service is going away. */
  close(): void {
    this.closed = true;
    for (const tenant of this.tenants.values()) {
      for (const waiter of tenant.queue.splice(0)) {
        this.queued--;
        waiter.fail(this.refusal('shutting_down'));
      }
    }
  }

  private acquire(principal: string, signal: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(this.refusal('shutting_down'));
    const tenant = this.tenant(principal);
    // Slots are handed out as soon as they free up, so a free slot here means nobody who could
    // use it is waiting: taking it at once is fair.
    if (
      tenant.queue.length === 0 &&
      tenant.running < this.limits.perPrincipal &&
      this.running < this.limits.total
    ) {
      this.start(tenant);
      this.observer.waited?.(0);
      return Promise.resolve();
    }
    if (tenant.queue.length >= this.limits.queuePerPrincipal) {
      return Promise.reject(this.refusal('queue_full', tenant));
    }
    const enqueued = performance.now();
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const at = tenant.queue.indexOf(waiter);
        if (at < 0) return false;
        tenant.queue.splice(at, 1);
        this.queued--;
        this.forget(principal, tenant);
        return true;
      };
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.observer.waited?.(performance.now() - enqueued);
          resolve();
        },
        fail: (error) => {
          leave();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        if (leave()) reject(this.refusal('wait_expired', tenant));
      }, this.limits.maxWaitMs);
      // The caller has gone: nobody will read the answer, so the query gives up its place.
      const onAbort = () => {
        if (leave()) reject(new AppError('unavailable', 'The request was cancelled.'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      tenant.queue.push(waiter);
      this.queued++;
    });
  }

  private release(principal: string): void {
    const tenant = this.tenants.get(principal);
    if (tenant) {
      tenant.running--;
      this.running--;
      this.forget(principal, tenant);
    }
    this.dispatch();
  }

  private dispatch(): void {
    while (this.running < this.limits.total) {
      const next = this.nextTenant();
      if (!next) return;
      const waiter = next.queue.shift() as Waiter;
      this.queued--;
      this.start(next);
      waiter.admit();
    }
  }

  private nextTenant(): Tenant | undefined {
    let best: Tenant | undefined;
    for (const tenant of this.tenants.values()) {
      if (tenant.queue.length === 0 || tenant.running >= this.limits.perPrincipal) continue;
      if (
        !best ||
        tenant.running < best.running ||
        (tenant.running === best.running && tenant.lastServed < best.lastServed)
      ) {
        best = tenant;
      }
    }
    return best;
  }

  private start(tenant: Tenant): void {
    tenant.running++;
    tenant.lastServed = ++this.served;
    this.running++;
  }

  private tenant(principal: string): Tenant {
    let tenant = this.tenants.get(principal);
    if (!tenant) {
      tenant = { running: 0, queue: [], lastServed: 0 };
      this.tenants.set(principal, tenant);
    }
    return tenant;
  }

  private forget(principal: string, tenant: Tenant): void {
    if (tenant.running === 0 && tenant.queue.length === 0) this.tenants.delete(principal);
  }

  private refusal(reason: RejectReason, tenant?: Tenant): AppError {
    this.observer.rejected?.(reason);
    // Roughly when a slot should be free for this caller: the work ahead of it, spread over
    // the slots that will do it.
    const ahead = reason === 'shutting_down' ? 0 : this.queued + this.running;
    const retryAfter = Math.min(
      60,
      Math.max(1, Math.ceil((this.averageRunMs * ahead) / this.limits.total / 1000)),
    );
    const headers = { 'Retry-After': String(retryAfter) };
    if (reason === 'shutting_down') {
      return new AppError('unavailable', 'The server is shutting down; send the query again.', {
        headers,
      });
    }
    const own = tenant !== undefined && tenant.running >= this.limits.perPrincipal;
    const members = {
      running: tenant?.running ?? 0,
      queued: tenant?.queue.length ?? 0,
      max_running: this.limits.perPrincipal,
      max_queued: this.limits.queuePerPrincipal,
    };
    if (reason === 'queue_full' || own) {
      return new AppError(
        'rate_limited',
        reason === 'queue_full'
          ? `This caller already has ${members.running} analytics queries running and ${members.queued} waiting, the most allowed; send more once some have finished.`
          : `This caller's own ${members.running} running analytics queries held this one for ${this.limits.maxWaitMs} ms; send it again once some have finished.`,
        { headers, members },
      );
    }
    return new AppError(
      'unavailable',
      `The service is busy with other analytics queries and had no slot for this one within ${this.limits.maxWaitMs} ms.`,
      { headers },
    );
  }
}
