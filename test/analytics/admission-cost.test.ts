import { describe, expect, it } from 'vitest';
import {
  Admission,
  type AdmissionLimits,
  type StatementCost,
} from '../../libs/analytics/execute/admission.ts';

/**
 * Queries of one statement each, of a given cost; each finishes when the test says so, and the
 * order in which they got the engine is recorded.
 */
function harness(limits: Partial<AdmissionLimits> = {}) {
  const admission = new Admission({
    total: 64,
    perPrincipal: 8,
    queuePerPrincipal: 64,
    maxWaitMs: 600_000,
    statementSlots: 1,
    ...limits,
  });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const query = (principal: string, name: string, cost: StatementCost) => {
    const ticket = admission.ticket(principal, new AbortController().signal, 60_000);
    return ticket
      .run(async () => {
        started.push(name);
        await new Promise<void>((resolve) => finishers.set(name, resolve));
        return name;
      }, cost)
      .finally(() => ticket.close());
  };
  /** Finishes the statement that started last and waits for the next to start. */
  const finishLast = async () => {
    const name = started.at(-1) as string;
    const count = started.length;
    await until(() => finishers.has(name));
    finishers.get(name)?.();
    finishers.delete(name);
    await until(() => started.length > count);
  };
  /** Finishes the statements running, one at a time, until `count` have started. */
  const drain = async (count: number) => {
    while (started.length < count) await finishLast();
  };
  const finishAll = async () => {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      const open = [...finishers.entries()];
      if (open.length === 0) return;
      for (const [name, finish] of open) {
        finishers.delete(name);
        finish();
      }
    }
  };
  return { admission, started, query, finishLast, drain, finishAll };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('Admission by statement cost', () => {
  it('gives a freed engine to a cheap statement queued behind long ones', async () => {
    const { started, query, drain, finishAll } = harness();
    const all = [query('A', 'a-long', 'long')];
    await until(() => started.length === 1);
    all.push(query('B', 'b-long', 'long'), query('C', 'c-long', 'long'));
    all.push(query('D', 'd-cheap', 'cheap'));
    await drain(4);
    expect(started).toEqual(['a-long', 'd-cheap', 'b-long', 'c-long']);
    await finishAll();
    await Promise.all(all);
  });

  it("takes a principal's own cheap statement before its long ones", async () => {
    const { admission, started, finishAll } = harness();
    const ticket = admission.ticket('A', new AbortController().signal, 60_000);
    const statement = (name: string, cost: StatementCost) =>
      ticket.run(async () => {
        started.push(name);
        await new Promise((resolve) => setImmediate(resolve));
      }, cost);
    const first = statement('rows', 'long');
    await until(() => started.length === 1);
    const rest = [statement('totals', 'long'), statement('horizon', 'cheap')];
    await Promise.all([first, ...rest, finishAll()]);
    ticket.close();
    expect(started).toEqual(['rows', 'horizon', 'totals']);
  });

  it('lets a long statement go once cheap ones have overtaken it the most times allowed', async () => {
    const { started, query, drain, finishAll } = harness({
      maxOvertakes: 3,
      agingMs: 600_000,
    });
    const all = [query('A', 'a-long', 'long')];
    await until(() => started.length === 1);
    all.push(query('B', 'b-long', 'long'));
    for (let i = 1; i <= 6; i++) all.push(query(`C${i}`, `c${i}`, 'cheap'));
    await drain(8);
    expect(started).toEqual(['a-long', 'c1', 'c2', 'c3', 'b-long', 'c4', 'c5', 'c6']);
    await finishAll();
    await Promise.all(all);
  });

  it('lets a long statement go once it has waited the aging time and been overtaken', async () => {
    const { started, query, drain, finishAll } = harness({ maxOvertakes: 1_000, agingMs: 5 });
    const all = [query('A', 'a-long', 'long')];
    await until(() => started.length === 1);
    all.push(query('B', 'b-long', 'long'));
    for (let i = 1; i <= 4; i++) all.push(query(`C${i}`, `c${i}`, 'cheap'));
    // Past the aging time before anything is served: one overtake is then enough.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await drain(6);
    expect(started).toEqual(['a-long', 'c1', 'b-long', 'c2', 'c3', 'c4']);
    await finishAll();
    await Promise.all(all);
  });

  it('never starves a long statement under an endless stream of cheap ones', async () => {
    const { started, query, finishLast, finishAll } = harness({
      maxOvertakes: 4,
      agingMs: 600_000,
    });
    const all = [query('A', 'a-long', 'long'), query('B', 'b-long', 'long')];
    await until(() => started.length === 1);
    // Two more cheap statements arrive before each one finishes: cheap ones always wait.
    let next = 0;
    while (!started.includes('b-long') && next < 40) {
      for (let i = 0; i < 2; i++) {
        next++;
        all.push(query(`C${next % 5}`, `c${next}`, 'cheap'));
      }
      await finishLast();
    }
    expect(started.slice(0, 6)).toEqual(['a-long', 'c1', 'c2', 'c3', 'c4', 'b-long']);
    while (started.length < next + 2) await finishLast();
    await finishAll();
    await Promise.all(all);
  });

  it('admits a cheap query first when queries, not statements, are admitted (a server)', async () => {
    const { started, query, drain, finishAll } = harness({ statementSlots: undefined, total: 1 });
    const all = [query('A', 'a-long', 'long')];
    await until(() => started.length === 1);
    all.push(query('B', 'b-long', 'long'), query('C', 'c-cheap', 'cheap'));
    await drain(3);
    expect(started).toEqual(['a-long', 'c-cheap', 'b-long']);
    await finishAll();
    await Promise.all(all);
  });

  it('keeps the turns between principals when every statement is of one cost', async () => {
    const { started, query, drain, finishAll } = harness();
    const all = [query('A', 'a1', 'cheap')];
    await until(() => started.length === 1);
    all.push(query('A', 'a2', 'cheap'), query('B', 'b1', 'cheap'), query('A', 'a3', 'cheap'));
    all.push(query('C', 'c1', 'cheap'));
    await drain(5);
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    await finishAll();
    await Promise.all(all);
  });
});
