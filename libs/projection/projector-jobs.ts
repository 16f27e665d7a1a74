import type { Job, JobQueue } from '../storage/queue.ts';
import { drainOutbox, type ProjectorDeps } from './projector.ts';

const DRAIN: Job = { name: 'drain-outbox' };
const SCHEDULE_ID = 'drain-outbox-every';

export interface RunningProjector {
  /**
   * Stops taking batches: the batch in hand finishes (its checkpoint commits), the job ends,
   * and the queue is not closed here: the engines own it. Resolves once a drain this process
   * started without the queue has finished its batch.
   */
  stop(): Promise<void>;
}

/** Consumes projector jobs in this process, and keeps a timer job as a safety net. */
export async function startProjector(
  queue: JobQueue,
  deps: ProjectorDeps,
  pollMs: number,
): Promise<RunningProjector> {
  const stopping = new AbortController();
  const drainDeps = { ...deps, signal: stopping.signal };
  queue.process(async (job) => {
    switch (job.name) {
      case 'drain-outbox':
        await drainOutbox(drainDeps);
        return;
    }
  });
  // A Redis that is down or does not answer now must not stop the process from starting (BullMQ
  // holds every command until its first connection): the re-assertion below sets the timer up
  // once it answers, and until then the projector drains without the queue.
  void queue.repeat(SCHEDULE_ID, DRAIN, pollMs).catch(() => {});
  void queue.add(DRAIN).catch(() => {});
  // A Redis restarted without persistence comes back without the job schedule; facts written
  // while it was away would then wait for the next write's wake-up. Re-asserting the schedule
  // (an idempotent upsert) brings the timer back within a few polls. The in-process queue
  // cannot lose it, and would stack a timer per call.
  const reassert =
    queue.kind === 'bullmq'
      ? setInterval(
          () => {
            queue.repeat(SCHEDULE_ID, DRAIN, pollMs).catch(() => {});
            queue.add(DRAIN, { dedupId: DRAIN.name }).catch(() => {});
          },
          Math.max(pollMs * 10, 1_000),
        )
      : undefined;
  reassert?.unref();
  // While Redis does not answer, no job (timer or wake-up) reaches any worker, so this process
  // drains the outbox on the poll interval itself until the queue delivers again. A drain
  // racing a job's drain is safe: batches are claimed under the checkpoint's row lock and a
  // batch sent twice carries the same deduplication token. A failed drain (Postgres or
  // ClickHouse away) is retried at the next tick. A process that sends no wake-ups (the
  // projector role) learns that Redis is away from the ping each tick sends while it answers.
  let withoutQueue: Promise<void> | undefined;
  let probing = false;
  const fallback =
    queue.kind === 'bullmq'
      ? setInterval(() => {
          if (withoutQueue || stopping.signal.aborted) return;
          if (queue.delivering()) {
            if (probing) return;
            probing = true;
            queue
              .ping()
              .catch(() => {})
              .finally(() => {
                probing = false;
              });
            return;
          }
          withoutQueue = drainOutbox(drainDeps)
            .then(
              () => {},
              () => {},
            )
            .finally(() => {
              withoutQueue = undefined;
            });
        }, pollMs)
      : undefined;
  fallback?.unref();
  return {
    async stop() {
      clearInterval(reassert);
      clearInterval(fallback);
      stopping.abort();
      await queue.stopProcessing();
      await withoutQueue;
    },
  };
}

/**
 * A wake-up for the projector after a commit. Best effort: a job carries no facts, only "look
 * at the outbox", and every drain reads from the checkpoint, so a lost wake-up only delays
 * facts until the next drain (the timer job, or a later wake-up); a queue hiccup never fails
 * the write that already committed. While the queue's circuit breaker is open the add fails
 * at once and the wake-up is skipped; nothing waits on a hung Redis.
 */
export function wakeProjector(queue: JobQueue): () => void {
  return () => {
    queue.add(DRAIN, { dedupId: DRAIN.name }).catch(() => {});
  };
}
