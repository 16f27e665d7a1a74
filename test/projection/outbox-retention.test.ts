import type { ClickHouseClient } from '@clickhouse/client';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../libs/config/config.ts';
import { pruneOutbox, readRetention } from '../../libs/projection/outbox-retention.ts';
import { FACTS_CHECKPOINT } from '../../libs/projection/projector.ts';
import { rebuildFacts } from '../../libs/projection/rebuild.ts';
import type { Db } from '../../libs/storage/database.ts';
import { appendFacts, type Fact } from '../../libs/tasks/outbox.repository.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { factFor, rollupsVersusFacts } from '../support/projection-invariants.ts';

const DAY_MS = 86_400_000;
/** Every column but projected_at (a re-projected fact gets a new one), one row per fact. */
const FACT_COLUMNS = `fact_id, kind, business, task_gid, occurred_at, project, assignee, status,
  previous_status, previous_project, previous_assignee, previous_due_on, due_on, task_created_at,
  dependency_gid, created_project, created_assignee, created_status, first_completion,
  blocked_known, blocked_project, blocked_assignee, blocked_status, blocked_change`;

const factsIn = async (ch: ClickHouseClient) =>
  (
    await ch.query({
      query: `SELECT ${FACT_COLUMNS} FROM facts ORDER BY fact_id`,
      format: 'JSONEachRow',
    })
  ).json<{ fact_id: string }>();
const rollupsIn = async (ch: ClickHouseClient) =>
  Object.fromEntries(
    Object.entries(await rollupsVersusFacts(ch)).map(([table, both]) => [table, both.rollup]),
  );
/** An id taken now and written later: a transaction that took its id early and committed late. */
const reserveId = async (db: Db) =>
  Number(
    (await sql<{ id: string }>`select nextval('outbox_id_seq') as id`.execute(db)).rows[0]?.id,
  );
const insertWithId = async (db: Db, id: number, fact: Fact) => {
  await sql`insert into outbox (id, kind, business, task_gid, payload, occurred_at)
    values (${id}, ${fact.kind}, ${fact.business}, ${fact.task_gid},
      ${JSON.stringify(fact.payload)}::jsonb, ${fact.occurred_at})`.execute(db);
};

describe('CAIRN_OUTBOX_RETENTION_DAYS', () => {
  it('defaults to 7 days, takes 0, and refuses what is not a whole number of days', () => {
    expect(loadConfig({}).outboxRetentionDays).toBe(7);
    expect(loadConfig({ CAIRN_OUTBOX_RETENTION_DAYS: '0' }).outboxRetentionDays).toBe(0);
    for (const bad of ['-1', '1.5', 'week']) {
      expect(() => loadConfig({ CAIRN_OUTBOX_RETENTION_DAYS: bad })).toThrow(
        /CAIRN_OUTBOX_RETENTION_DAYS/,
      );
    }
  });
});

describe('outbox retention at 0 days, then a rebuild', () => {
  const businesses = ['ret_one', 'ret_two'];
  const cairn = useCairn({
    rateLimits: unlimited(),
    businesses,
    env: { CAIRN_OUTBOX_RETENTION_DAYS: '0' },
  });
  const ch = () => cairn.engines.clickhouse.client;

  const call = async (method: string, path: string, body: unknown) => {
    const res = await http(cairn.url, method, path, { headers: cairn.auth, body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body as { data: { gid: string } };
  };
  const write = async (i: number) => {
    const business = businesses[i % 2] as string;
    const created = await call('POST', '/api/v1/tasks', {
      business,
      name: `t${i}`,
      project: `p${i % 3}`,
      assignee: i % 4 ? 'ann' : 'bob',
    });
    if (i % 3 === 0) {
      await call('PUT', `/api/v1/tasks/${created.data.gid}`, { status: 'completed' });
    }
  };
  const outboxSize = async () =>
    Number(
      (await sql<{ n: string }>`select count(*) as n from outbox`.execute(cairn.db)).rows[0]?.n,
    );
  const chCounts = async () => {
    const result = await ch().query({
      query: 'SELECT count() AS rows, uniqExact(fact_id) AS distinct FROM facts',
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ rows: string; distinct: string }>();
    return { rows: Number(row?.rows), distinct: Number(row?.distinct) };
  };
  /** Every fact ever written is in ClickHouse once: the pruned ones plus the outbox's. */
  const settled = async () => {
    const [state, outbox, facts] = await Promise.all([
      readRetention(cairn.db),
      outboxSize(),
      chCounts(),
    ]);
    const written = state.removed + outbox;
    return facts.rows === written && facts.distinct === written ? written : false;
  };
  const facts = () => factsIn(ch());
  const rollups = () => rollupsIn(ch());
  const answers = async () => {
    const out: unknown[] = [];
    for (const body of [
      { metrics: ['tasks_created', 'tasks_completed'], dimensions: ['business'], period: 'today' },
      { metrics: ['open_tasks'], dimensions: ['business', 'project'], period: 'today' },
      { metrics: ['tasks_created'], dimensions: ['assignee'], period: 'last_7_days' },
    ]) {
      const res = await http(cairn.url, 'POST', '/api/v1/query', { headers: cairn.auth, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      out.push((res.body as { data: unknown }).data);
    }
    return out;
  };

  it('removes projected facts while writes go on, and a rebuild gives back every fact and rollup', {
    timeout: 180_000,
  }, async () => {
    // Written only after retention has passed its id: a late commit below pruned facts.
    const lateId = await reserveId(cairn.db);

    let i = 0;
    let running = true;
    const writer = (async () => {
      while (running) await write(i++);
    })();
    // Retention runs in the server's background loop, during the writes.
    await waitFor(async () => (await readRetention(cairn.db)).removed >= 30 && i >= 60, {
      timeoutMs: 60_000,
    });
    running = false;
    await writer;

    const before = await readRetention(cairn.db);
    expect(before.maxRemovedId).toBeGreaterThan(lateId);
    await insertWithId(cairn.db, lateId, factFor('ret_one', 'late-commit'));
    await appendFacts(cairn.db, [factFor('ret_two', 'after-late')]);

    // Everything projected once, and the outbox emptied down to what retention may not remove.
    const written = await waitFor(settled, { timeoutMs: 30_000 });
    const created = await ch().query({
      query: "SELECT count() AS n FROM facts WHERE kind = 'task_created'",
      format: 'JSONEachRow',
    });
    expect(Number((await created.json<{ n: string }>())[0]?.n)).toBe(i + 2);
    await waitFor(async () => (await outboxSize()) === 0, { timeoutMs: 30_000 });
    const pruned = await readRetention(cairn.db);
    expect(pruned.removed).toBe(written);
    const live = await sql<{ xid: string; id: string }>`
      select cursor_xid::text as xid, cursor_id as id from projector_checkpoints
      where name = ${FACTS_CHECKPOINT}`.execute(cairn.db);
    expect({ xid: live.rows[0]?.xid, id: Number(live.rows[0]?.id) }).toEqual(pruned.horizon);

    const factsBefore = await facts();
    const rollupsBefore = await rollups();
    const answersBefore = await answers();
    expect(factsBefore).toHaveLength(written);
    expect(factsBefore.filter((f) => Number(f.fact_id) === lateId)).toHaveLength(1);

    // A rebuild now finds nothing in the outbox: every fact comes from ClickHouse's history.
    const { facts: rebuilt } = await rebuildFacts({
      db: cairn.db,
      clickhouse: ch(),
      batchSize: 50,
      builds: cairn.rollups,
    });
    expect(rebuilt).toBe(written);
    await waitFor(settled, { timeoutMs: 30_000 });
    expect(await facts()).toEqual(factsBefore);
    expect(await rollups()).toEqual(rollupsBefore);
    expect(await answers()).toEqual(answersBefore);
  });
});

describe('outbox retention with a retention period', () => {
  const cairn = useCairn({
    businesses: ['ret_days', 'ret_other'],
    env: { CAIRN_OUTBOX_RETENTION_DAYS: '3650' },
  });
  const cursor = async () => {
    const row = (
      await sql<{ xid: string; id: string }>`
        select cursor_xid::text as xid, cursor_id as id from projector_checkpoints
        where name = ${FACTS_CHECKPOINT}`.execute(cairn.db)
    ).rows[0];
    return { xid: row?.xid ?? '0', id: Number(row?.id ?? 0) };
  };
  const caughtUp = async () => {
    const left = await sql<{ n: string }>`
      select count(*) as n from outbox o, projector_checkpoints c
      where c.name = ${FACTS_CHECKPOINT} and (o.xid, o.id) > (c.cursor_xid, c.cursor_id)`.execute(
      cairn.db,
    );
    return Number(left.rows[0]?.n) === 0;
  };

  it('removes only facts the projector had passed a whole period ago', async () => {
    const prune = (now: Date) =>
      pruneOutbox({ db: cairn.db, days: 1, batchSize: 4, now: () => now });
    for (let n = 0; n < 6; n++) await appendFacts(cairn.db, [factFor('ret_days', `a${n}`)]);
    await waitFor(caughtUp);
    const first = await cursor();
    const t1 = new Date(Date.now() + 10 * DAY_MS);
    // Projected, but not a day ago by the marks: nothing goes.
    expect(await prune(t1)).toBe(0);

    for (let n = 0; n < 6; n++) await appendFacts(cairn.db, [factFor('ret_days', `b${n}`)]);
    await waitFor(caughtUp);
    const t2 = new Date(t1.getTime() + DAY_MS - 1_000);
    // Not yet a day after t1: still nothing.
    expect(await prune(t2)).toBe(0);
    const t3 = new Date(t1.getTime() + DAY_MS + 1_000);
    // A day after t1: what the projector had passed at t1 goes, in batches, and nothing after.
    let removed = 0;
    for (let got = await prune(t3); got > 0; got = await prune(t3)) removed += got;
    expect(removed).toBe(6);
    expect((await readRetention(cairn.db)).horizon).toEqual(first);
    const left = await sql<{ task_gid: string }>`select task_gid from outbox order by id`.execute(
      cairn.db,
    );
    expect(left.rows.map((r) => r.task_gid)).toEqual(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
  });

  it('rebuilds the pruned range from ClickHouse and the outbox tail, a late fact once', {
    timeout: 120_000,
  }, async () => {
    const ch = cairn.engines.clickhouse.client;
    const prune = async () => {
      let removed = 0;
      for (;;) {
        const got = await pruneOutbox({ db: cairn.db, days: 0, batchSize: 5 });
        if (got === 0) return removed;
        removed += got;
      }
    };
    const lateId = await reserveId(cairn.db);
    for (let n = 0; n < 20; n++) {
      await appendFacts(cairn.db, [factFor(n % 2 ? 'ret_days' : 'ret_other', `c${n}`)]);
    }
    await waitFor(caughtUp);
    await prune();
    const state = await readRetention(cairn.db);
    expect(state.maxRemovedId).toBeGreaterThan(lateId);

    // The tail: facts projected and still in the outbox, one of them with an id below pruned
    // ones. ClickHouse holds it among the ids the pruned range spans; it must come back once.
    await insertWithId(cairn.db, lateId, factFor('ret_other', 'late'));
    for (let n = 0; n < 4; n++) await appendFacts(cairn.db, [factFor('ret_days', `tail${n}`)]);
    await waitFor(caughtUp);
    const outbox = await sql<{ id: string }>`select id from outbox`.execute(cairn.db);
    expect(outbox.rows.map((r) => Number(r.id))).toContain(lateId);
    const factsBefore = await factsIn(ch);
    const rollupsBefore = await rollupsIn(ch);
    expect(factsBefore.length).toBe(state.removed + outbox.rows.length);

    // Pruning at 0 days after every batch of the rebuild: it removes only what the rebuild has
    // read already, never a fact it has yet to project.
    let pruning = Promise.resolve(0);
    const { facts } = await rebuildFacts({
      db: cairn.db,
      clickhouse: ch,
      batchSize: 2,
      builds: cairn.rollups,
      onProgress: () => {
        pruning = pruning.then(async (sum) => sum + (await prune()));
      },
    });
    const prunedDuring = await pruning;
    expect(prunedDuring).toBeGreaterThan(0);
    expect(facts).toBe(factsBefore.length);
    expect(await factsIn(ch)).toEqual(factsBefore);
    expect(await rollupsIn(ch)).toEqual(rollupsBefore);

    // Pruning goes on from where it was, and the outbox tail is the only thing left to go.
    expect(prunedDuring + (await prune())).toBe(outbox.rows.length);
    expect(await factsIn(ch)).toEqual(factsBefore);
  });
});
