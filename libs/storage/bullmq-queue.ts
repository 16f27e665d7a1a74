import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { CircuitBreaker } from './circuit-breaker.ts';
import type { AddOptions, Job, JobHandler, JobQueue, QueueStats } from './queue.ts';
import { JOB_ATTEMPTS } from './queue.ts';
import type { RedisGuard } from './redis-guard.ts';

export interface BullQueueOptions {
  redisUrl: string;
  /** Redis key prefix; tests use a fresh one per file. */
  prefix: string;
  name?: string;
  /**
   * Time limit and circuit breaker for the producer's commands (add, repeat, stats, ping);
   * the worker's blocking connection waits for Redis as BullMQ requires.
   * @defaultValue 500 ms, 3 failures, 5 s cool-down
   */
  guard?: RedisGuard;
}

const DEFAULT_GUARD: RedisGuard = {
  commandTimeoutMs: 500,
  breakerFailures: 3,
  breakerCoolDownMs: 5_000,
};

export class BullQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly queue: Queue;
  private readonly connection: Redis;
  private worker: Worker | undefined;
  private workerConnection: Redis | undefined;

  private readonly options: BullQueueOptions;
  /**
   * Open while Redis is not answering: adds fail at once (`BreakerOpenError`) instead of each
   * write's wake-up waiting for the command timeout and piling up in the client.
   */
  readonly breaker: CircuitBreaker;

  constructor(options: BullQueueOptions) {
    this.options = options;
    const guard = options.guard ?? DEFAULT_GUARD;
    this.breaker = new CircuitBreaker({
      name: 'redis_queue',
      whileOpen: 'projector wake-ups skipped; the projector drains the outbox on its own timer',
      timeoutMs: guard.commandTimeoutMs,
      failureThreshold: guard.breakerFailures,
      coolDownMs: guard.breakerCoolDownMs,
      observer: guard.observer,
    });
    // No client-side command timeout: BullMQ's start-up commands must not fail for good on a
    // slow first answer. The breaker's time limit bounds each of our calls instead.
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false });
    this.connection.on('error', () => {});
    // A reconnect (Redis restarted, or the network back) closes the breaker at once.
    this.connection.on('ready', () => this.breaker.recovered());
    this.queue = new Queue(this.queueName, { connection: this.connection, prefix: options.prefix });
    this.queue.on('error', () => {});
  }

  private get queueName(): string {
    return this.options.name ?? 'projector';
  }

  async add(job: Job, options: AddOptions = {}): Promise<void> {
    await this.guarded(() =>
      this.queue.add(job.name, job, {
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 100 },
        removeOnComplete: true,
        removeOnFail: 1000,
        ...(options.dedupId ? { deduplication: { id: options.dedupId } } : {}),
      }),
    );
  }

  async repeat(id: string, job: Job, everyMs: number): Promise<void> {
    await this.guarded(() =>
      this.queue.upsertJobScheduler(
        id,
        { every: everyMs },
        { name: job.name, data: job, opts: { removeOnComplete: true, removeOnFail: 100 } },
      ),
    );
  }

  process(handler: JobHandler): void {
    // Blocking commands must wait as long as Redis is away: BullMQ requires this for workers.
    this.workerConnection = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', () => {});
    this.worker = new Worker(this.queueName, async (job) => handler(job.data as Job), {
      connection: this.workerConnection,
      prefix: this.options.prefix,
      concurrency: 1,
    });
    this.worker.on('error', () => {});
  }

  async stopProcessing(): Promise<void> {
    const worker = this.worker;
    const connection = this.workerConnection;
    this.worker = undefined;
    this.workerConnection = undefined;
    await worker?.close();
    connection?.disconnect();
  }

  delivering(): boolean {
    // A refused or dropped connection shows at once in its status; a hung one only once the
    // breaker has seen its commands time out.
    return this.connection.status === 'ready' && this.breaker.state === 'closed';
  }

  async stats(): Promise<QueueStats> {
    const counts = await this.guarded(() =>
      this.queue.getJobCounts('waiting', 'active', 'failed', 'delayed'),
    );
    return {
      waiting: (counts.waiting ?? 0) + (counts.delayed ?? 0),
      active: counts.active ?? 0,
      failed: counts.failed ?? 0,
    };
  }

  async ping(): Promise<void> {
    await this.guarded(() => this.connection.ping());
  }

  /**
   * Runs a producer command under the breaker. BullMQ's own start-up (connect, version check,
   * scripts) is awaited first, outside the time limit: a slow first answer on a busy machine
   * is not a hung server; once it is done this resolves at once.
   */
  private async guarded<T>(work: () => Promise<T>): Promise<T> {
    await this.queue.waitUntilReady();
    return this.breaker.run(work);
  }

  async close(): Promise<void> {
    await this.stopProcessing();
    await this.queue.close();
    this.connection.disconnect();
  }
}
