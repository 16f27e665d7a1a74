import { Worker, workerData } from 'node:worker_threads';
import { AppError } from './errors.ts';

/** What a pool posts to a worker, and what the worker answers for it. */
export interface WorkerJob<I> {
  id: number;
  input: I;
}
export type WorkerReply = { id: number; output: unknown } | { id: number; failure: string };

export interface WorkerPoolOptions {
  /** The worker's module. It answers each WorkerJob with one WorkerReply. */
  entry: URL;
  /** Handed to every worker; read there with `poolData()`. Must survive structured cloning. */
  data: unknown;
  /** Threads at most, started on demand. */
  threads: number;
  /** Longest a job may take from submission, its wait in the queue included. */
  timeoutMs: number;
  /** Jobs that may wait for a free thread; past them, callers are refused at once. */
  maxQueued: number;
  /** Told why a thread died (an uncaught error, a failed start). */
  onError?: (error: unknown) => void;
}

/** The data a worker's pool was started with. */
export const poolData = <T>(): T => (workerData as { data: T }).data;

// Workers start from this script so the entry may be TypeScript on any Node: Node strips types
// itself from 22.18 (production); before that, the dev tools' loader (tsx) is registered first,
// since a module that failed to load once stays failed.
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (!process.features.typescript) (await import('tsx/esm/api')).register();
  await import(workerData.entry);
})();
`;

interface Job {
  id: number;
  input: unknown;
  transfer: ArrayBuffer[];
  timer: NodeJS.Timeout;
  resolve(output: unknown): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  job?: Job;
  /** Whether it ever answered: a thread that dies before that cannot start at all. */
  answered: boolean;
}

const refused = (detail: string) =>
  new AppError('unavailable', detail, { headers: { 'Retry-After': '1' } });

/**
 * A few worker threads for CPU-heavy work on client input, one job per thread at a time. Every
 * job ends: with the worker's answer, or with a 503 problem when the pool is full, the job
 * outlives `timeoutMs` (its thread is then terminated: it may be stuck) or its thread dies.
 * Threads are unref'd: an idle pool never holds the process open.
 */
export class WorkerPool<I, O> {
  private readonly threads = new Set<Thread>();
  private readonly idle: Thread[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  private readonly options: WorkerPoolOptions;

  constructor(options: WorkerPoolOptions) {
    this.options = options;
  }

  /** Runs a job; `transfer` lists buffers of `input` that move to the worker (no copy). */
  run(input: I, transfer: ArrayBuffer[] = []): Promise<O> {
    if (this.closed) return Promise.reject(refused('The server is shutting down.'));
    if (this.queue.length >= this.options.maxQueued) {
      return Promise.reject(refused('Too many large request bodies are waiting to be read.'));
    }
    return new Promise<O>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        input,
        transfer,
        resolve: resolve as (output: unknown) => void,
        reject,
        timer: setTimeout(() => this.expire(job), this.options.timeoutMs),
      };
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Refuses waiting jobs and stops every thread. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0))
      this.settle(job, refused('The server is shutting down.'));
    await Promise.all([...this.threads].map((thread) => this.stop(thread)));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const thread =
        this.idle.pop() ?? (this.threads.size < this.options.threads ? this.spawn() : undefined);
      if (!thread) return;
      const job = this.queue.shift() as Job;
      thread.job = job;
      thread.worker.postMessage(
        { id: job.id, input: job.input } satisfies WorkerJob<unknown>,
        job.transfer,
      );
    }
  }

  private spawn(): Thread {
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { entry: this.options.entry.href, data: this.options.data },
    });
    worker.unref();
    const thread: Thread = { worker, answered: false };
    this.threads.add(thread);
    worker.on('message', (reply: WorkerReply) => {
      const { job } = thread;
      if (job?.id !== reply.id) return;
      thread.job = undefined;
      thread.answered = true;
      this.idle.push(thread);
      if ('failure' in reply) this.settle(job, new Error(`worker failed: ${reply.failure}`));
      else this.settle(job, undefined, reply.output);
      this.dispatch();
    });
    // An uncaught error ends the thread too: 'exit' follows and does the accounting.
    worker.on('error', (error) => this.options.onError?.(error));
    worker.once('exit', () => this.lost(thread));
    return thread;
  }

  private lost(thread: Thread): void {
    if (!this.forget(thread)) return;
    if (thread.job) this.settle(thread.job, refused('The request body could not be read.'));
    // A thread that died before answering anything could not start: the jobs behind it would
    // only start more that die the same way.
    if (!thread.answered) {
      for (const job of this.queue.splice(0)) {
        this.settle(job, refused('The request body could not be read.'));
      }
    }
    if (!this.closed) this.dispatch();
  }

  private expire(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    const thread = [...this.threads].find((candidate) => candidate.job === job);
    this.settle(job, refused('The request body could not be read in time.'));
    if (thread) {
      thread.job = undefined;
      void this.stop(thread);
    }
  }

  private async stop(thread: Thread): Promise<void> {
    this.forget(thread);
    if (thread.job) this.settle(thread.job, refused('The server is shutting down.'));
    await thread.worker.terminate();
    if (!this.closed) this.dispatch();
  }

  /** Removes a thread from the pool; false when it was already gone. */
  private forget(thread: Thread): boolean {
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
    return this.threads.delete(thread);
  }

  private settle(job: Job, error: unknown, output?: unknown): void {
    clearTimeout(job.timer);
    if (error) job.reject(error);
    else job.resolve(output);
  }
}
