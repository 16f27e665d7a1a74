import { setTimeout as delay } from 'node:timers/promises';

/**
 * Spaces the projector's small inserts. Every insert into `facts` costs ClickHouse about
 * 100 ms of CPU in the rollup views whatever its size, so a steady stream of writes drained
 * batch after batch spends a core on inserts of a few hundred rows. After a batch smaller than
 * the batch size, the next one waits until `lingerMs` after that batch began: facts arriving
 * meanwhile go in together. The first fact after a quiet spell goes at once, and full batches
 * (a backlog) never wait.
 */
export class InsertPacing {
  private lastSmallStart = Number.NEGATIVE_INFINITY;
  private readonly lingerMs: number;

  constructor(lingerMs: number) {
    this.lingerMs = lingerMs;
  }

  /** Resolves once the next batch may start, or at once when `signal` aborts. */
  async ready(signal?: AbortSignal): Promise<void> {
    const wait = this.lastSmallStart + this.lingerMs - performance.now();
    if (wait <= 0 || signal?.aborted) return;
    // An abort rejects the delay; a stop only ends the wait early.
    await delay(wait, undefined, { signal }).catch(() => {});
  }

  /** Told after each batch that projected something: when it began and whether it was full. */
  projected(startedAt: number, full: boolean): void {
    if (!full) this.lastSmallStart = startedAt;
  }
}
