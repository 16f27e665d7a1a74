import { AppError } from '../../http/errors.ts';
import { inSpan } from '../../tracing/tracing.ts';

export interface AdmissionLimits {
  /** Queries running at once, every principal together. */
  total: number;
  /** Queries one principal may have running at once. */
  perPrincipal: number;
  /** Queries one principal may have waiting beyond those running; the next one is refused. */
  queuePerPrincipal: number;
  /**
   * How long a query may wait for its admission (its first statement's start) while the
   * principal's cap or the total holds it; with statement slots, waiting only for the engine
   * is bounded by the turns instead.
   */
  maxWaitMs: number;
  /**
   * Statements the engine runs at once, every query together. Unset: an admitted query's
   * statements run side by side (a ClickHouse server). Embedded chDB runs one statement at a
   * time and cannot interrupt it: there the engine is taken per statement, in turns between
   * principals, so another principal's query waits behind at most one running statement.
   */
  statementSlots?: number;
}

export type RejectReason = 'queue_full' | 'wait_expired' | 'shutting_down';

export interface AdmissionObserver {
  rejected?(reason: RejectReason): void;
  /** How long an admitted query waited for its admission. */
  waited?(ms: number): void;
}

/**
 * One query's admission and time budget, shared by every statement it runs (rows, totals,
 * comparison, own-reads). The first statement that needs the engine asks for admission; the
 * budget is spent only while at least one of the query's statements runs, so time spent
 * waiting (for admission, or for the engine between statements) never eats it.
 */
export interface QueryTicket {
  /**
   * Runs one statement: `work` gets the budget left for it in ms (at least a token amount when
   * the query's budget is spent, so a statement still answers, flagged partial by its caller).
   */
  run<T>(work: (budgetMs: number) => Promise<T>): Promise<T>;
  /** Ends the query: frees its place; statements of it still waiting are refused. */
  close(): void;
}

interface Waiter {
  ticket: Ticket;
  admit(): void;
  fail(error: AppError): void;
}

interface Tenant {
  /** Admitted queries, not yet closed. */
  running: number;
  /** Queries waiting for admission. */
  queue: Waiter[];
  /** Statements of admitted queries waiting for the engine (statement slots only). */
  next: Waiter[];
  /** Sequence number of this tenant's latest admission or statement: the fairness tie-breaker. */
  lastServed: number;
}

/** A first guess at a query's run time, before any has finished. */
const INITIAL_RUN_MS = 500;
/**
 * What a statement gets once its query's budget is spent: enough for the engine to stop at its
 * first check and answer what it has, which the caller flags as partial, rather than throwing
 * away what the query's earlier statements computed.
 */
export const SPENT_BUDGET_MS = 1;

/**
 * Admission control for analytics queries: caps per principal and overall, and a queue that is
 * fair across principals. A query is admitted once (all its statements together); a freed slot
 * goes to the waiting principal with the fewest queries running, then to the one served longest
 * ago, so a principal's backlog never puts another principal behind more than the queries
 * already running. With statement slots (embedded chDB) the engine is handed out per statement,
 * to the principal served longest ago, at every statement boundary. A query that cannot be
 * admitted within the wait bound, or whose principal already has a full queue, is refused with
 * `Retry-After`: 429 when the principal's own queries are what holds it back, 503 when the
 * service is busy.
 */
export class Admission {
  private readonly tenants = new Map<string, Tenant>();
  private running = 0;
  private queued = 0;
  /** Statements on the engine now (counted only with statement slots). */
  private busy = 0;
  private served = 0;
  private closed = false;
  /** Moving average of query run times, for an honest Retry-After. */
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

  /** Opens one query's ticket; nothing is taken until its first statement runs. */
  ticket(principal: string, signal: AbortSignal, budgetMs: number): QueryTicket {
    return new Ticket(this, principal, signal, budgetMs);
  }

  /** Runs `work` as a query of one statement: admitted, then run, then closed. */
  async run<T>(principal: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const ticket = this.ticket(principal, signal, Number.POSITIVE_INFINITY);
    try {
      return await ticket.run(work);
    } finally {
      ticket.close();
    }
  }

  /** Refuses every query waiting for admission and any that arrives later: the service is going away. */
  close(): void {
    this.closed = true;
    for (const tenant of this.tenants.values()) {
      for (const waiter of tenant.queue.splice(0)) {
        this.queued--;
        waiter.fail(this.refusal('shutting_down'));
      }
    }
  }

  /**
   * The longest one statement may run when the engine is taken per statement: half the wait
   * bound, so a query waiting behind one running statement is never refused for it, however
   * the budget and the wait are set.
   */
  get statementCapMs(): number {
    return this.perStatement ? this.limits.maxWaitMs / 2 : Number.POSITIVE_INFINITY;
  }

  private get perStatement(): boolean {
    return this.limits.statementSlots !== undefined;
  }

  private engineFree(): boolean {
    return !this.perStatement || this.busy < (this.limits.statementSlots as number);
  }

  /**
   * Admits `ticket`'s query; with statement slots, the admission hands its first statement the
   * engine too (so a query counts as waiting until it really starts).
   */
  admit(ticket: Ticket): Promise<void> {
    if (this.closed) return Promise.reject(this.refusal('shutting_down'));
    const tenant = this.tenant(ticket.principal);
    // Slots are handed out as soon as they free up, so a free one here means nobody who could
    // use it is waiting: taking it at once is fair.
    if (
      tenant.queue.length === 0 &&
      tenant.running < this.limits.perPrincipal &&
      this.running < this.limits.total &&
      this.engineFree()
    ) {
      this.startQuery(tenant, ticket);
      this.observer.waited?.(0);
      return Promise.resolve();
    }
    if (tenant.queue.length >= this.limits.queuePerPrincipal) {
      return Promise.reject(this.refusal('queue_full', tenant));
    }
    const enqueued = performance.now();
    return this.wait(tenant, ticket, 'queue', {
      timeoutMs: this.limits.maxWaitMs,
      onAdmit: () => this.observer.waited?.(performance.now() - enqueued),
    });
  }

  /** The engine for one more statement of an admitted query, in turn with other principals. */
  statement(ticket: Ticket): Promise<void> {
    if (!this.perStatement) return Promise.resolve();
    const tenant = this.tenant(ticket.principal);
    if (this.engineFree() && !this.anyWaiting()) {
      this.busy++;
      tenant.lastServed = ++this.served;
      return Promise.resolve();
    }
    return this.wait(tenant, ticket, 'next', {});
  }

  /** A statement of `ticket` has left the engine. */
  statementDone(): void {
    if (!this.perStatement) return;
    this.busy--;
    this.dispatch();
  }

  /** `ticket`'s query has ended: its place goes to the next in line. */
  queryDone(ticket: Ticket, ranMs: number): void {
    const tenant = this.tenants.get(ticket.principal);
    if (tenant) {
      // Its statements still waiting will never run: nobody reads their answers.
      for (const waiter of tenant.next.filter((w) => w.ticket === ticket)) {
        waiter.fail(new AppError('unavailable', 'The query has ended.'));
      }
      tenant.running--;
      this.running--;
      this.forget(ticket.principal, tenant);
    }
    this.averageRunMs = 0.8 * this.averageRunMs + 0.2 * ranMs;
    this.dispatch();
  }

  private wait(
    tenant: Tenant,
    ticket: Ticket,
    line: 'queue' | 'next',
    options: { timeoutMs?: number; onAdmit?: () => void },
  ): Promise<void> {
    const { signal, principal } = ticket;
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const at = tenant[line].indexOf(waiter);
        if (at < 0) return false;
        tenant[line].splice(at, 1);
        if (line === 'queue') this.queued--;
        this.forget(principal, tenant);
        return true;
      };
      const waiter: Waiter = {
        ticket,
        admit: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          options.onAdmit?.();
          resolve();
        },
        fail: (error) => {
          leave();
          reject(error);
        },
      };
      const expire = () => {
        // Waiting only for the engine, within the principal's share: the turns between
        // principals bound that wait (one statement of each other principal at most), so it is
        // not refused for it.
        if (line === 'queue' && this.onlyEngineBlocks(tenant, waiter)) {
          timer = setTimeout(expire, options.timeoutMs);
          return;
        }
        if (leave()) reject(this.refusal('wait_expired', tenant));
      };
      let timer =
        options.timeoutMs === undefined ? undefined : setTimeout(expire, options.timeoutMs);
      // The caller has gone: nobody will read the answer, so the query gives up its place.
      const onAbort = () => {
        if (leave()) reject(new AppError('unavailable', 'The request was cancelled.'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      tenant[line].push(waiter);
      if (line === 'queue') this.queued++;
    });
  }

  private onlyEngineBlocks(tenant: Tenant, waiter: Waiter): boolean {
    const ahead = tenant.queue.indexOf(waiter);
    return (
      this.perStatement &&
      !this.closed &&
      ahead >= 0 &&
      tenant.running + ahead < this.limits.perPrincipal &&
      this.running + ahead < this.limits.total
    );
  }

  private anyWaiting(): boolean {
    return this.nextTenant() !== undefined;
  }

  private dispatch(): void {
    while (this.engineFree()) {
      const next = this.nextTenant();
      if (!next) return;
      if (next.next.length > 0) {
        // A running query's next statement goes before a new query of the same principal.
        const waiter = next.next.shift() as Waiter;
        this.busy++;
        next.lastServed = ++this.served;
        waiter.admit();
      } else {
        const waiter = next.queue.shift() as Waiter;
        this.queued--;
        this.startQuery(next, waiter.ticket);
        waiter.admit();
      }
    }
  }

  private startable(tenant: Tenant): boolean {
    return (
      !this.closed &&
      tenant.queue.length > 0 &&
      tenant.running < this.limits.perPrincipal &&
      this.running < this.limits.total
    );
  }

  private nextTenant(): Tenant | undefined {
    let best: Tenant | undefined;
    for (const tenant of this.tenants.values()) {
      if (tenant.next.length === 0 && !this.startable(tenant)) continue;
      if (!best) {
        best = tenant;
        continue;
      }
      // Per statement the engine goes round the principals in turn; per query (a server),
      // the principal with the fewest queries running goes first.
      const better = this.perStatement
        ? tenant.lastServed < best.lastServed ||
          (tenant.lastServed === best.lastServed && tenant.running < best.running)
        : tenant.running < best.running ||
          (tenant.running === best.running && tenant.lastServed < best.lastServed);
      if (better) best = tenant;
    }
    return best;
  }

  private startQuery(tenant: Tenant, ticket: Ticket): void {
    tenant.running++;
    tenant.lastServed = ++this.served;
    this.running++;
    if (this.perStatement) this.busy++;
    ticket.admitted = true;
  }

  private tenant(principal: string): Tenant {
    let tenant = this.tenants.get(principal);
    if (!tenant) {
      tenant = { running: 0, queue: [], next: [], lastServed: 0 };
      this.tenants.set(principal, tenant);
    }
    return tenant;
  }

  private forget(principal: string, tenant: Tenant): void {
    if (tenant.running === 0 && tenant.queue.length === 0 && tenant.next.length === 0) {
      this.tenants.delete(principal);
    }
  }

  private refusal(reason: RejectReason, tenant?: Tenant): AppError {
    this.observer.rejected?.(reason);
    // Roughly when a slot should be free for this caller: the work ahead of it, spread over
    // the slots that will do it.
    const ahead = reason === 'shutting_down' ? 0 : this.queued + this.running;
    const slots = this.limits.statementSlots ?? this.limits.total;
    const retryAfter = Math.min(
      60,
      Math.max(1, Math.ceil((this.averageRunMs * ahead) / slots / 1000)),
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

/** One query's place in admission and its budget (see `QueryTicket`). */
class Ticket implements QueryTicket {
  admitted = false;
  private admission: Promise<void> | null = null;
  private closed = false;
  private released = false;
  /** Statements of this query on the engine now, and since when one has been. */
  private active = 0;
  private activeSince = 0;
  private spentMs = 0;
  private admittedAt = 0;

  private readonly owner: Admission;
  readonly principal: string;
  readonly signal: AbortSignal;
  private readonly budgetMs: number;

  constructor(owner: Admission, principal: string, signal: AbortSignal, budgetMs: number) {
    this.owner = owner;
    this.principal = principal;
    this.signal = signal;
    this.budgetMs = budgetMs;
  }

  async run<T>(work: (budgetMs: number) => Promise<T>): Promise<T> {
    if (this.closed) throw new AppError('unavailable', 'The query has ended.');
    if (!this.admission) {
      // The first statement's admission brings it the engine as well.
      this.admission = inSpan(
        'admission wait',
        { attributes: { 'cairn.admission.line': 'queue' } },
        () => this.owner.admit(this),
      ).then(() => {
        this.admittedAt = performance.now();
        // Closed while it waited (another statement of it failed): give everything back.
        if (this.closed) {
          this.owner.statementDone();
          this.release();
          throw new AppError('unavailable', 'The query has ended.');
        }
      });
      await this.admission;
    } else {
      await this.admission;
      if (this.closed) throw new AppError('unavailable', 'The query has ended.');
      await inSpan('admission wait', { attributes: { 'cairn.admission.line': 'next' } }, () =>
        this.owner.statement(this),
      );
    }
    this.begin();
    try {
      const left = Math.min(this.budgetMs - this.spent(), this.owner.statementCapMs);
      return await work(Math.max(SPENT_BUDGET_MS, left));
    } finally {
      this.end();
      this.owner.statementDone();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.admitted) this.release();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.owner.queryDone(this, performance.now() - this.admittedAt);
  }

  private spent(): number {
    return this.spentMs + (this.active > 0 ? performance.now() - this.activeSince : 0);
  }

  private begin(): void {
    if (this.active++ === 0) this.activeSince = performance.now();
  }

  private end(): void {
    if (--this.active === 0) this.spentMs += performance.now() - this.activeSince;
  }
}
