import { describe, expect, it } from 'vitest';
import {
  Admission,
  type AdmissionLimits,
  type QueryTicket,
  SPENT_BUDGET_MS,
} from '../../libs/analytics/execute/admission.ts';
import { AppError } from '../../libs/http/errors.ts';

/**
 * Queries of several statements each; every statement finishes when the test says so, and the
 * order in which statements got the engine is recorded with the budget each was given.
 */
function harness(limits: Partial<AdmissionLimits> = {}) {
  const admission = new Admission({
    total: 8,
    perPrincipal: 2,
    queuePerPrincipal: 10,
    maxWaitMs: 600_000,
    statementSlots: 1,
    ...limits,
  });
  const started: string[] = [];
  const budgets = new Map<string, number>();
  const finishers = new Map<string, () => void>();
  const statement = (ticket: QueryTicket, name: string) =>
    ticket.run(async (budgetMs) => {
      started.push(name);
      budgets.set(name, budgetMs);
      await new Promise<void>((resolve) => finishers.set(name, resolve));
      return name;
    });
  /** A query whose statements all ask for the engine at once, as rows and totals do. */
  const query = (principal: string, names: string[], budgetMs = 60_000, signal?: AbortSignal) => {
    const ticket = admission.ticket(principal, signal ?? new AbortController().signal, budgetMs);
    return Promise.all(names.map((name) => statement(ticket, name))).finally(() => ticket.close());
  };
  const finish = async (name: string) => {
    await until(() => finishers.has(name));
    finishers.get(name)?.();
  };
  return { admission, started, budgets, statement, query, finish };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('Admission per query, engine per statement (embedded chDB)', () => {
  it("puts another principal's query behind one running statement, not behind a whole query", async () => {
    const { started, query, finish } = harness();
    const heavy = query('A', ['a-rows', 'a-totals', 'a-compare', 'a-reads']);
    await until(() => started.length === 1);
    const cheap = query('B', ['b-rows', 'b-reads']);
    await finish('a-rows');
    await until(() => started.length === 2);
    // At every statement boundary the engine goes to the principal served longest ago.
    expect(started).toEqual(['a-rows', 'b-rows']);
    await finish('b-rows');
    await until(() => started.length === 3);
    await finish('a-totals');
    await until(() => started.length === 4);
    await finish('b-reads');
    expect(await cheap).toEqual(['b-rows', 'b-reads']);
    for (const name of ['a-compare', 'a-reads']) await finish(name);
    await heavy;
    expect(started).toEqual(['a-rows', 'b-rows', 'a-totals', 'b-reads', 'a-compare', 'a-reads']);
  });

  it("admits a query once: its later statements never wait on the principal's own cap", async () => {
    // One query at a time for A, and a wait bound far shorter than its statements take: each
    // statement admitted on its own would be refused while the one before it runs.
    const { admission, started, query, finish } = harness({ perPrincipal: 1, maxWaitMs: 20 });
    const a = query('A', ['rows', 'totals', 'comparison']);
    await until(() => started.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(admission.state).toEqual({ running: 1, queued: 0 });
    for (const name of ['rows', 'totals', 'comparison']) await finish(name);
    expect(await a).toEqual(['rows', 'totals', 'comparison']);
    expect(admission.state).toEqual({ running: 0, queued: 0 });
  });

  it("refuses past a principal's cap with 429 and Retry-After, while its running query goes on", async () => {
    const { started, query, finish } = harness({ perPrincipal: 1, queuePerPrincipal: 1 });
    const first = query('A', ['a1-rows', 'a1-totals']);
    const second = query('A', ['a2-rows']);
    const refused = await query('A', ['a3-rows']).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number((refused as AppError).extra.headers?.['Retry-After'])).toBeGreaterThanOrEqual(1);
    for (const name of ['a1-rows', 'a1-totals', 'a2-rows']) await finish(name);
    await Promise.all([first, second]);
    expect(started).toEqual(['a1-rows', 'a1-totals', 'a2-rows']);
  });

  it('never refuses a query that waits only for the engine; past its own cap it is a 429', async () => {
    const { started, query, finish } = harness({ perPrincipal: 1, maxWaitMs: 40 });
    const a1 = query('A', ['a1']);
    await until(() => started.length === 1);
    const b = query('B', ['b']);
    const a2 = query('A', ['a2']).catch((error: unknown) => error);
    // Both wait several wait bounds: B only for the engine, A's second for A's own query.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await a2).toMatchObject({ code: 'rate_limited', status: 429 });
    await finish('a1');
    await finish('b');
    expect(await b).toEqual(['b']);
    await a1;
    expect(started).toEqual(['a1', 'b']);
  });

  it('shares one time budget between the statements, charging only time on the engine', async () => {
    const { budgets, started, query, finish } = harness();
    const a = query('A', ['rows', 'totals', 'comparison'], 300);
    await until(() => started.length === 1);
    expect(budgets.get('rows')).toBeCloseTo(300, 0);
    // Another principal's statement in between costs A nothing.
    const b = query('B', ['b']);
    await new Promise((resolve) => setTimeout(resolve, 120));
    await finish('rows');
    await until(() => started.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await finish('b');
    await until(() => started.length === 3);
    const totals = budgets.get('totals') as number;
    expect(totals).toBeLessThanOrEqual(300 - 110);
    expect(totals).toBeGreaterThan(SPENT_BUDGET_MS);
    // Once spent, a statement still runs, with the token budget that makes the engine stop at
    // once and answer what it has (flagged partial by the caller), not throw the rest away.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await finish('totals');
    await until(() => started.length === 4);
    expect(budgets.get('comparison')).toBe(SPENT_BUDGET_MS);
    await finish('comparison');
    await Promise.all([a, b]);
  });

  it('caps one statement at half the wait bound, so nobody waiting behind it is refused for it', async () => {
    const { budgets, started, query, finish } = harness({ maxWaitMs: 400 });
    const a = query('A', ['rows'], 10_000);
    await until(() => started.length === 1);
    expect(budgets.get('rows')).toBe(200);
    await finish('rows');
    await a;
  });

  it('drops the waiting statements of a query that ends, and lets running queries finish on close', async () => {
    const { admission, started, statement, finish } = harness();
    const a = admission.ticket('A', new AbortController().signal, 60_000);
    const rows = statement(a, 'rows');
    await until(() => started.length === 1);
    const totals = statement(a, 'totals').catch((error: unknown) => error);
    const waiting = admission.ticket('B', new AbortController().signal, 60_000);
    const queued = statement(waiting, 'b').catch((error: unknown) => error);
    admission.close();
    // Waiting for admission at shutdown: refused at once.
    expect(await queued).toMatchObject({ code: 'unavailable', status: 503 });
    // Admitted before it: its next statement still gets the engine.
    await finish('rows');
    await rows;
    await finish('totals');
    expect(await totals).toBe('totals');
    // A query that ends with a statement still waiting gives the engine back for good.
    const c = new Admission({
      total: 8,
      perPrincipal: 2,
      queuePerPrincipal: 10,
      maxWaitMs: 600_000,
      statementSlots: 1,
    });
    let release: (() => void) | undefined;
    const held = c.run('op', new AbortController().signal, () => {
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    await until(() => release !== undefined);
    const ticket = c.ticket('A', new AbortController().signal, 60_000);
    const first = ticket.run(async () => 'first');
    await until(() => c.state.queued === 1);
    ticket.close();
    release?.();
    await held;
    await expect(first).rejects.toMatchObject({ code: 'unavailable' });
    expect(c.state).toEqual({ running: 0, queued: 0 });
    expect(await c.run('B', new AbortController().signal, async () => 'free')).toBe('free');
    a.close();
  });
});

describe('Admission per query on a ClickHouse server (no statement slots)', () => {
  it("runs an admitted query's statements side by side, and other queries beside it", async () => {
    const { started, query, finish } = harness({ statementSlots: undefined, total: 2 });
    const a = query('A', ['a-rows', 'a-totals', 'a-reads']);
    const b = query('B', ['b-rows']);
    await until(() => started.length === 4);
    expect([...started].sort()).toEqual(['a-reads', 'a-rows', 'a-totals', 'b-rows']);
    // The total counts queries, not statements: a third waits for one to end.
    const c = query('C', ['c-rows']);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started).toHaveLength(4);
    for (const name of ['b-rows', 'c-rows', 'a-rows', 'a-totals', 'a-reads']) await finish(name);
    await Promise.all([a, b, c]);
  });
});
