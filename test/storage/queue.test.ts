import { afterEach, describe, expect, it } from 'vitest';
import { BullQueue } from '../../libs/storage/bullmq-queue.ts';
import { MemoryQueue } from '../../libs/storage/memory-queue.ts';
import type { Job, JobQueue } from '../../libs/storage/queue.ts';
import { SERVER_REDIS_URL, uniqueName, waitFor } from '../support/engines.ts';

const DRAIN: Job = { name: 'drain-outbox' };

const makers: Record<string, () => JobQueue> = {
  memory: () => new MemoryQueue(),
  bullmq: () => new BullQueue({ redisUrl: SERVER_REDIS_URL, prefix: uniqueName('cairn_q') }),
};

describe.each(Object.keys(makers))('%s queue', (kind) => {
  let queue: JobQueue;
  afterEach(async () => queue?.close());

  it('delivers added jobs to the handler', async () => {
    queue = makers[kind]!();
    const seen: Job[] = [];
    queue.process(async (job) => {
      seen.push(job);
    });
    await queue.add(DRAIN);
    await waitFor(async () => seen.length >= 1);
    expect(seen[0]).toEqual(DRAIN);
  });

  it('retries a failing job until it succeeds', async () => {
    queue = makers[kind]!();
    let calls = 0;
    queue.process(async () => {
      calls += 1;
      if (calls < 3) throw new Error('engine away');
    });
    await queue.add(DRAIN);
    await waitFor(async () => calls >= 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls).toBe(3);
    expect((await queue.stats()).failed).toBe(0);
  });

  it('keeps one waiting job per dedup id', async () => {
    queue = makers[kind]!();
    for (let i = 0; i < 5; i++) await queue.add(DRAIN, { dedupId: 'drain' });
    expect((await queue.stats()).waiting).toBe(1);
    let calls = 0;
    queue.process(async () => {
      calls += 1;
    });
    await waitFor(async () => calls >= 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(calls).toBe(1);
  });

  it('repeats a job on a timer', async () => {
    queue = makers[kind]!();
    let calls = 0;
    queue.process(async () => {
      calls += 1;
    });
    await queue.repeat('tick', DRAIN, 50);
    await waitFor(async () => calls >= 3, { timeoutMs: 5_000 });
    await queue.ping();
  });
});
