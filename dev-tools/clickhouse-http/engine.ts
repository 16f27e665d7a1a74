import fs from 'node:fs/promises';
import { version as chdbVersion, Session } from 'chdb';
import { exception } from './exceptions.ts';
import { SessionState } from './session-state.ts';

/** One statement in the engine's queue or running on it, as KILL QUERY sees it. */
export interface Job {
  readonly queryId: string;
  readonly user: string;
  readonly query: string;
  /** Aborted by KILL QUERY or by the client going away. */
  readonly signal: AbortSignal;
  running: boolean;
  /** While it runs: whether an abort stops it (a streamed SELECT, between two chunks). */
  interruptible: boolean;
}

export interface JobSpec {
  queryId: string;
  user: string;
  query: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** `kill_status` as a server reports it for KILL QUERY (`unknown_status`: TEST, nothing done). */
export type KillStatus = 'waiting' | 'cant_cancel' | 'finished' | 'unknown_status';

interface Entry extends Job {
  readonly kill: AbortController;
  readonly finished: Promise<void>;
}

/**
 * The one chDB session of this process (chDB binds one data directory per process) and the
 * FIFO in which statements take it: chDB runs one statement at a time.
 */
export class Engine {
  /** The engine's version as a server reports it, and whose stand-in it is. */
  readonly version: string;
  readonly timezone: string;
  readonly state: SessionState;
  readonly #session: Session;
  #tail: Promise<void> = Promise.resolve();
  readonly #jobs = new Map<string, Entry>();

  private constructor(session: Session, state: SessionState, version: string, timezone: string) {
    this.#session = session;
    this.state = state;
    this.version = version;
    this.timezone = timezone;
  }

  static async open(dataDir: string): Promise<Engine> {
    await fs.mkdir(dataDir, { recursive: true });
    const session = new Session(dataDir);
    try {
      const state = await SessionState.capture(session);
      const [version, timezone] = (
        await session.queryAsync('SELECT version(), timezone()', { format: 'TabSeparated' })
      )
        .text()
        .trim()
        .split('\t') as [string, string];
      return new Engine(session, state, `${version} (chDB ${chdbVersion().chdb})`, timezone);
    } catch (error) {
      session.close();
      throw error;
    }
  }

  /**
   * Runs `work` with the session to itself once every statement queued before it is done.
   * A statement killed or abandoned while it waits never starts.
   */
  async exclusive<T>(spec: JobSpec, work: (session: Session, job: Job) => Promise<T>): Promise<T> {
    if (this.#jobs.has(spec.queryId)) {
      throw exception(
        'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING',
        `Query with id = ${spec.queryId} is already running`,
      );
    }
    const kill = new AbortController();
    let done!: () => void;
    const entry: Entry = {
      queryId: spec.queryId,
      user: spec.user,
      query: spec.query,
      kill,
      signal: AbortSignal.any([kill.signal, spec.signal]),
      running: false,
      interruptible: false,
      finished: new Promise((resolve) => {
        done = resolve;
      }),
    };
    this.#jobs.set(spec.queryId, entry);
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise((resolve) => {
      release = resolve;
    });
    try {
      await Promise.race([previous, cancelled(entry.signal)]);
      if (entry.signal.aborted) throw wasCancelled();
      entry.running = true;
      return await work(this.#session, entry);
    } finally {
      this.#jobs.delete(spec.queryId);
      done();
      // The queue moves on only once the statement before is done too.
      void previous.then(release);
    }
  }

  /** KILL QUERY: stops a queued statement, or a streamed SELECT at its next chunk. */
  async kill(
    queryId: string,
    mode: 'SYNC' | 'ASYNC' | 'TEST',
  ): Promise<Array<{ job: Job; status: KillStatus }>> {
    const entry = this.#jobs.get(queryId);
    if (!entry) return [];
    if (mode === 'TEST') return [{ job: entry, status: 'unknown_status' }];
    if (entry.running && !entry.interruptible) return [{ job: entry, status: 'cant_cancel' }];
    entry.kill.abort();
    if (mode === 'ASYNC') return [{ job: entry, status: 'waiting' }];
    await entry.finished;
    return [{ job: entry, status: 'finished' }];
  }

  /** Stops what can be stopped, waits for the rest, then closes the session. */
  async close(): Promise<void> {
    for (const entry of this.#jobs.values()) entry.kill.abort();
    await this.#tail;
    this.#session.close();
  }
}

export const wasCancelled = () => exception('QUERY_WAS_CANCELLED', 'Query was cancelled');

function cancelled(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
