import { findErasure, runningErasures } from './erasure.repository.ts';
import { ErasureAborted, type ErasureDeps, runErasure } from './erasure.service.ts';

/** The levels background erasures log at (a pino logger is one). */
export interface ErasureLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Seconds before an erasure that failed (an engine away) is tried again from its step. */
const RETRY_AFTER_MS = 5_000;

/**
 * Runs erasures in the background of a server: those started through the API, and at start-up
 * those a stopped or crashed process left running. One run per business at a time in this
 * process; another instance running the same one only repeats steps, which delete nothing twice.
 */
export class BackgroundErasures {
  private readonly runs = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();
  private readonly retries = new Set<NodeJS.Timeout>();

  private readonly deps: Omit<ErasureDeps, 'signal' | 'onProgress'>;
  private readonly logger: ErasureLog | undefined;

  constructor(deps: Omit<ErasureDeps, 'signal' | 'onProgress'>, logger?: ErasureLog) {
    this.deps = deps;
    this.logger = logger;
  }

  /** Resumes every erasure left running. */
  async resume(): Promise<void> {
    for (const business of await runningErasures(this.deps.db)) this.run(business);
  }

  /** Logs name the erasure by its id, never the business: a log outlives the erasure. */
  run(business: string): void {
    if (this.controller.signal.aborted || this.runs.has(business)) return;
    let erasure: string | undefined;
    const run = findErasure(this.deps.db, business)
      .then((started) => {
        erasure = started?.id;
        return runErasure({ ...this.deps, signal: this.controller.signal }, business);
      })
      .then((row) => {
        this.logger?.info(
          { erasure: row.id, tasks: row.tasks_deleted, facts: row.facts_deleted },
          'erasure: business erased',
        );
      })
      .catch((error: unknown) => {
        if (error instanceof ErasureAborted) return;
        this.logger?.error(
          { err: withoutName(error, business), erasure },
          'erasure: a step failed; it is retried',
        );
        this.retryLater(business);
      })
      .finally(() => this.runs.delete(business));
    this.runs.set(business, run);
  }

  private retryLater(business: string): void {
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.run(business);
    }, RETRY_AFTER_MS);
    timer.unref();
    this.retries.add(timer);
  }

  /** Stops after the slice in hand; the erasures resume at the next start. */
  async stop(): Promise<void> {
    this.controller.abort();
    for (const timer of this.retries) clearTimeout(timer);
    await Promise.allSettled(this.runs.values());
  }
}

/**
 * The error as a log may show it: its class, code, message and stack with the business's name
 * taken out (an engine's message can quote a statement or a value). Other members (a driver's
 * `detail`, a `cause`) are left out: they may carry it in forms not recognised here.
 */
function withoutName(error: unknown, business: string): Error {
  const original = error instanceof Error ? error : new Error(String(error));
  const scrub = (text: string) => text.split(business).join('[business]');
  const shown = new Error(scrub(original.message));
  shown.name = original.name;
  shown.stack = original.stack === undefined ? undefined : scrub(original.stack);
  const { code } = original as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') Object.assign(shown, { code });
  return shown;
}
