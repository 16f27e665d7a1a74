import type { Job, JobQueue } from '../storage/queue.ts';
import { drainOutbox, type ProjectorDeps } from './projector.ts';

const DRAIN: Job = { name: 'drain-outbox' };

/** Consumes projector jobs in this process, and keeps a timer job as a safety net. */
export async function startProjector(
  queue: JobQueue,
  deps: ProjectorDeps,
  pollMs: number,
): Promise<void> {
  queue.process(async (job) => {
    switch (job.name) {
      case 'drain-outbox':
        await drainOutbox(deps);
        return;
    }
  });
  await queue.repeat('drain-outbox-every', DRAIN, pollMs);
  await queue.add(DRAIN);
}

/**
 * A wake-up for the projector after a commit. Best effort: a lost wake-up only delays a fact
 * until the timer job, so a queue hiccup never fails the write that already committed.
 */
export function wakeProjector(queue: JobQueue): () => void {
  return () => {
    queue.add(DRAIN, { dedupId: DRAIN.name }).catch(() => {});
  };
}
