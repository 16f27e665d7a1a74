/** What the projector's jobs look like; a discriminated union so the dispatcher is a `switch`. */
export type Job = { name: 'drain-outbox' };

export interface AddOptions {
  /** While a job with this id is still waiting, adding another one is a no-op. */
  dedupId?: string;
}

export interface QueueStats {
  waiting: number;
  active: number;
  failed: number;
}

export type JobHandler = (job: Job) => Promise<void>;

/**
 * The small surface Cairn needs from a job queue: BullMQ over Redis in production, an
 * in-process queue on embedded engines. Delivery is at-least-once in both: handlers must be
 * idempotent.
 */
export interface JobQueue {
  readonly kind: 'bullmq' | 'memory';
  add(job: Job, options?: AddOptions): Promise<void>;
  /** Adds `job` every `everyMs`, once across all processes sharing the queue. */
  repeat(id: string, job: Job, everyMs: number): Promise<void>;
  /** Starts consuming jobs in this process. */
  process(handler: JobHandler): void;
  /** Stops consuming jobs in this process (the one in hand finishes); `process` may start it again. */
  stopProcessing(): Promise<void>;
  /**
   * False while jobs cannot reach this process because the queue's server is not answering
   * (not connected, or its circuit breaker is not closed); consumers then do the work without
   * the queue.
   */
  delivering(): boolean;
  stats(): Promise<QueueStats>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const JOB_ATTEMPTS = 10;
export const retryDelayMs = (attempt: number): number => Math.min(100 * 2 ** (attempt - 1), 10_000);
