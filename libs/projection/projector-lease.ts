import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../storage/database.ts';
import { holdsLease, releaseLease, takeLease } from './projector-lease.repository.ts';

/** A batch's claim was made under a lease this process no longer holds: drop the batch. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor() {
    super('this projector no longer holds the projector lease');
  }
}

/** What the projector asks of its leadership while it projects a batch. */
export interface Leadership {
  /** The epoch a batch is claimed under; throws LeaseLostError unless this process leads now. */
  claim(): number;
  /** Throws LeaseLostError unless the lease is still held at `epoch` (no round trip). */
  assertCurrent(epoch: number): void;
  /**
   * Throws LeaseLostError unless the lease is still held at `epoch`; inside `trx` the lease row
   * stays share-locked until it ends, so nobody takes the lease before the commit.
   */
  fence(trx: Transaction<Database>, epoch: number): Promise<void>;
}

export interface LeaseOptions {
  /** How long a taking or renewal lasts without another. @defaultValue 10000 */
  ttlMs: number;
  /** The lease's name: one projector leads per name. */
  name?: string;
  /** Told when a taking or renewal fails (the database away); the lease runs out meanwhile. */
  onError?: (error: unknown) => void;
}

/**
 * One projector process leads at a time. The lease lives in Postgres with the database's own
 * clock; the holder renews it four times per lifetime, standbys try to take it as often, so a
 * holder that dies is replaced within one lifetime and a renewal. Locally the lease counts as
 * held only until its lifetime, less a margin, has passed since the renewal was asked for: a
 * process paused past that stops inserting the moment it resumes, before it could learn so
 * from the database.
 */
export class ProjectorLease implements Leadership {
  readonly holder = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #db: Kysely<Database>;
  readonly #options: Required<Pick<LeaseOptions, 'ttlMs' | 'name'>> & LeaseOptions;
  #epoch: number | null = null;
  #validUntil = 0;
  readonly #watchers = new Set<(leading: boolean) => void>();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #stopped = false;

  constructor(db: Kysely<Database>, options: LeaseOptions) {
    this.#db = db;
    this.#options = { name: 'projector', ...options };
  }

  /** Tries to take the lease once now, then keeps trying (or renewing) in the background. */
  async start(): Promise<void> {
    await this.#tick();
    this.#timer = setInterval(() => {
      this.#ticking ??= this.#tick().finally(() => {
        this.#ticking = undefined;
      });
    }, this.#options.ttlMs / 4);
    this.#timer.unref();
  }

  /** Calls `watcher` whenever this process starts or stops leading; returns the unwatch. */
  watch(watcher: (leading: boolean) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  get leading(): boolean {
    return this.#epoch !== null && performance.now() < this.#validUntil;
  }

  claim(): number {
    if (!this.leading) throw new LeaseLostError();
    return this.#epoch as number;
  }

  assertCurrent(epoch: number): void {
    if (!this.leading || this.#epoch !== epoch) throw new LeaseLostError();
  }

  async fence(trx: Transaction<Database>, epoch: number): Promise<void> {
    this.assertCurrent(epoch);
    if (!(await holdsLease(trx, this.#options.name, this.holder, epoch))) {
      throw new LeaseLostError();
    }
  }

  /** Stops renewing and gives the lease up at once, so a standby takes over without waiting. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#ticking;
    if (this.#epoch === null) return;
    this.#set(null);
    await releaseLease(this.#db, this.#options.name, this.holder).catch(() => {});
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    const asked = performance.now();
    const { ttlMs, name } = this.#options;
    try {
      const taken = await takeLease(this.#db, name, this.holder, ttlMs);
      if (this.#stopped) return;
      if (taken) {
        // Counted from the asking, not the answer: the lease may have started before the reply.
        this.#validUntil = asked + ttlMs * 0.8;
        this.#set(taken.epoch);
      } else {
        this.#set(null);
      }
    } catch (error) {
      this.#options.onError?.(error);
      // Unrenewed, the lease runs out on its own; until then this process still leads.
      if (!this.leading) this.#set(null);
    }
  }

  #set(epoch: number | null): void {
    const was = this.#epoch;
    this.#epoch = epoch;
    if ((was === null) !== (epoch === null)) {
      for (const watcher of this.#watchers) watcher(epoch !== null);
    }
  }
}

/** Work that runs only while this process leads (`start` on taking the lease, stopped on losing it). */
export interface LeaderWork {
  /** Resolves once the starts and stops asked for so far have happened. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export function whileLeading(
  lease: ProjectorLease,
  start: () => Promise<{ stop(): Promise<void> }>,
  onError: (error: unknown) => void,
): LeaderWork {
  let running: { stop(): Promise<void> } | undefined;
  let chain = Promise.resolve();
  const follow = (leading: boolean) => {
    chain = chain
      .then(async () => {
        if (leading && !running) running = await start();
        else if (!leading && running) {
          const stopping = running;
          running = undefined;
          await stopping.stop();
        }
      })
      .catch(onError);
  };
  const unwatch = lease.watch(follow);
  if (lease.leading) follow(true);
  return {
    settled: () => chain,
    async stop() {
      unwatch();
      follow(false);
      await chain;
    },
  };
}
