import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { AddOptions, Job, JobHandler, JobQueue, QueueStats } from './queue.ts';
import { JOB_ATTEMPTS } from './queue.ts';

export interface BullQueueOptions {
  redisUrl: string;
  /** Redis key prefix; tests use a fresh one per file. */
  prefix: string;
  name?: string;
}

export class BullQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly queue: Queue;
  private readonly connection: Redis;
  private worker: Worker | undefined;
  private workerConnection: Redis | undefined;

  private readonly options: BullQueueOptions;

  constructor(options: BullQueueOptions) {
    this.options = options;
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false });
    this.connection.on('error', () => {});
    this.queue = new Queue(this.queueName, { connection: this.connection, prefix: options.prefix });
    this.queue.on('error', () => {});
  }

  private get queueName(): string {
    return this.options.name ?? 'projector';
  }

  async add(job: Job, options: AddOptions = {}): Promise<void> {
    await this.queue.add(job.name, job, {
      attempts: JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: 100 },
      removeOnComplete: true,
      removeOnFail: 1000,
      ...(options.dedupId ? { deduplication: { id: options.dedupId } } : {}),
    });
  }

  async repeat(id: string, job: Job, everyMs: number): Promise<void> {
    await this.queue.upsertJobScheduler(
      id,
      { every: everyMs },
      { name: job.name, data: job, opts: { removeOnComplete: true, removeOnFail: 100 } },
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

  async stats(): Promise<QueueStats> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'failed', 'delayed');
    return {
      waiting: (counts.waiting ?? 0) + (counts.delayed ?? 0),
      active: counts.active ?? 0,
      failed: counts.failed ?? 0,
    };
  }

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    this.workerConnection?.disconnect();
    this.connection.disconnect();
  }
}
