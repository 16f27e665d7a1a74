import { describe, expect, it } from 'vitest';
import { Admission, type AdmissionLimits } from '../../libs/analytics/execute/admission.ts';
import { AppError } from '../../libs/http/errors.ts';

/** Work that finishes when the test says so, recording the order in which work started. */
function harness(limits: Partial<AdmissionLimits> = {}) {
  const admission = new Admission({
    total: 1,
    perPrincipal: 1,
    queuePerPrincipal: 10,
    maxWaitMs: 600_000,
    ...limits,
  });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const submit = (principal: string, name: string, signal = new AbortController().signal) =>
    admission.run(principal, signal, async () => {
      started.push(name);
      await new Promise<void>((resolve) => finishers.set(name, resolve));
      return name;
    });
  const finish = async (name: string) => {
    await until(() => finishers.has(name));
    finishers.get(name)?.();
  };
  return { admission, started, submit, finish };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('Admission', () => {
  it("gives the next slot to a principal with nothing running, ahead of another's backlog", async () => {
    const { started, submit, finish } = harness();
    const a = ['a1', 'a2', 'a3', 'a4'].map((name) => submit('A', name));
    await until(() => started.length === 1);
    const b = submit('B', 'b1');
    await finish('a1');
    await until(() => started.length === 2);
    expect(started).toEqual(['a1', 'b1']);
    await finish('b1');
    // Then turns alternate: A's backlog goes on, and a new B query waits one A query at most.
    await until(() => started.length === 3);
    const b2 = submit('B', 'b2');
    await finish('a2');
    await until(() => started.length === 4);
    expect(started).toEqual(['a1', 'b1', 'a2', 'b2']);
    await finish('b2');
    await finish('a3');
    await finish('a4');
    expect(await Promise.all([...a, b, b2])).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
  });

  it('caps each principal and the total, and admits at once while there is room', async () => {
    const { admission, started, submit, finish } = harness({ total: 3, perPrincipal: 2 });
    const runs = [submit('A', 'a1'), submit('A', 'a2'), submit('A', 'a3'), submit('B', 'b1')];
    await until(() => started.length === 3);
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect(admission.state).toEqual({ running: 3, queued: 1 });
    await finish('b1');
    // B's slot is free, but A is at its own cap: a3 still waits.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(admission.state).toEqual({ running: 2, queued: 1 });
    await finish('a1');
    await until(() => started.length === 4);
    await finish('a2');
    await finish('a3');
    await Promise.all(runs);
    expect(admission.state).toEqual({ running: 0, queued: 0 });
  });

  it('refuses past the per-principal queue with 429 and Retry-After, others unaffected', async () => {
    const { started, submit, finish } = harness({ queuePerPrincipal: 2 });
    const queued = [submit('A', 'a1'), submit('A', 'a2'), submit('A', 'a3')];
    const refused = await submit('A', 'a4').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number((refused as AppError).extra.headers?.['Retry-After'])).toBeGreaterThanOrEqual(1);
    const b = submit('B', 'b1');
    await finish('a1');
    await until(() => started.length === 2);
    expect(started[1]).toBe('b1');
    for (const name of ['b1', 'a2', 'a3']) await finish(name);
    await Promise.all([...queued, b]);
  });

  it('refuses a query whose wait runs out: 503 when others hold the slots, 429 when its own do', async () => {
    const { submit, finish } = harness({ maxWaitMs: 50, perPrincipal: 1, total: 1 });
    const a1 = submit('A', 'a1');
    const own = await submit('A', 'a2').catch((error: unknown) => error);
    expect(own).toMatchObject({ code: 'rate_limited' });
    const busy = await submit('B', 'b1').catch((error: unknown) => error);
    expect(busy).toMatchObject({ code: 'unavailable', status: 503 });
    expect((busy as AppError).extra.headers?.['Retry-After']).toMatch(/^\d+$/);
    await finish('a1');
    await a1;
  });

  it('lets a cancelled caller leave the queue, and answers every waiter 503 on close', async () => {
    const { admission, started, submit, finish } = harness();
    const a1 = submit('A', 'a1');
    const gone = new AbortController();
    const cancelled = submit('B', 'b1', gone.signal).catch((error: unknown) => error);
    const waiting = [submit('C', 'c1'), submit('D', 'd1')].map((run) =>
      run.catch((error: unknown) => error),
    );
    gone.abort();
    expect(await cancelled).toBeInstanceOf(AppError);
    expect(admission.state).toEqual({ running: 1, queued: 2 });
    admission.close();
    for (const refused of await Promise.all(waiting)) {
      expect(refused).toMatchObject({ code: 'unavailable', status: 503 });
      expect((refused as AppError).extra.headers?.['Retry-After']).toBe('1');
    }
    await expect(submit('E', 'e1')).rejects.toMatchObject({ code: 'unavailable' });
    // What was running finishes normally.
    await finish('a1');
    expect(await a1).toBe('a1');
    expect(started).toEqual(['a1']);
  });
});
