import type { AddOptions, Job, JobHandler, JobQueue, QueueStats } from './queue.ts';
import { JOB_ATTEMPTS, retryDelayMs } from './queue.ts';

interface Entry {
  job: Job;
  dedupId: string | undefined;
  attempt: number;
}

/** The embedded stand-in for BullMQ: one process, jobs run one at a time, failures retried. */
export class MemoryQueue implements JobQueue {
  readonly kind = 'memory' as const;
  private readonly waiting: Entry[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private handler: JobHandler | undefined;
  private running: Promise<void> | undefined;
  private active = 0;
  private failed = 0;
  private closed = false;

  async add(job: Job, options: AddOptions = {}): Promise<void> {
    if (this.closed) return;
    const { dedupId } = options;
    if (dedupId && this.waiting.some((entry) => entry.dedupId === dedupId)) return;
    this.waiting.push({ job, dedupId, attempt: 1 });
    this.kick();
  }

  async repeat(_id: string, job: Job, everyMs: number): Promise<void> {
    const timer = setInterval(() => void this.add(job, { dedupId: `repeat:${job.name}` }), everyMs);
    timer.unref();
    this.timers.add(timer);
  }

  process(handler: JobHandler): void {
    this.handler = handler;
    this.kick();
  }

  async stopProcessing(): Promise<void> {
    this.handler = undefined;
    await this.running;
  }

  delivering(): boolean {
    return true;
  }

  async stats(): Promise<QueueStats> {
    return { waiting: this.waiting.length, active: this.active, failed: this.failed };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.waiting.length = 0;
    await this.running;
  }

  private kick(): void {
    if (this.running || !this.handler) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.waiting.length > 0 && !this.closed) this.kick();
    });
  }

  private async drain(): Promise<void> {
    let entry = this.waiting.shift();
    while (entry && this.handler) {
      this.active = 1;
      try {
        await this.handler(entry.job);
      } catch {
        if (entry.attempt < JOB_ATTEMPTS && !this.closed) {
          const retry = { ...entry, attempt: entry.attempt + 1 };
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            this.waiting.push(retry);
            this.kick();
          }, retryDelayMs(entry.attempt));
          timer.unref();
          this.timers.add(timer);
        } else {
          this.failed += 1;
        }
      } finally {
        this.active = 0;
      }
      entry = this.closed ? undefined : this.waiting.shift();
    }
  }
}
