// A hub task with 100,000 dependents on Postgres (20,000 on PGlite, where arranging 100,000
// indexed tasks takes minutes): completing, reopening and deleting it answer, the facts they
// write stay bounded in size, and blocked_tasks after projection equals a count of the tasks
// themselves. Dependents and edges are arranged by SQL (thousands of HTTP calls would
// take minutes); their blocked state is recorded as a write would record it. The deletion
// writes one fact per removed edge: 20,000 facts, which bound a parameter per column each
// (100,000 parameters, past Postgres's 65,535) before the outbox took one array per column.
// `npm run bench -- isolation` measures 100,000 (arranging that many on PGlite takes minutes).
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../dev-tools/wait-for.ts';
import { blockedChanges, blockedCounts } from '../../libs/tasks/blocked-changes.repository.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import type { TaskRow } from '../../libs/tasks/task.repository.ts';
import { MAX_BLOCKED_PER_FACT, taskFact, withBlockedChunks } from '../../libs/tasks/task-facts.ts';
import { type TestCairn, unlimited, useCairn } from '../support/cairn.ts';
import { USE_SERVERS } from '../support/engines.ts';

const DEPENDENTS = USE_SERVERS ? 100_000 : 20_000;
/** Dependents with a project of their own: more label sets than one fact may carry. */
const SOLO = 600;

describe(`a hub task with ${DEPENDENTS.toLocaleString('en')} dependents`, () => {
  const cairn = useCairn({ rateLimits: unlimited() });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${cairn.url}${path}`, {
      method,
      headers: { ...cairn.auth, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: response.status,
      body: (response.status === 204 ? null : await response.json()) as any,
    };
  };

  /** Open tasks of the business with at least one open dependency, counted here. */
  const blockedInPostgres = async (db: TestCairn['db']) =>
    Number(
      (
        await sql<{ n: string }>`
          select count(*) as n from tasks t
          where t.business = 'acme' and t.status in ('open', 'in_progress')
            and exists (select 1 from task_dependencies e join tasks d on d.gid = e.dependency_gid
              where e.task_gid = t.gid and d.status in ('open', 'in_progress'))`.execute(db)
      ).rows[0]?.n,
    );

  /** blocked_tasks as the rollup answers it, once it equals `expected` (or the last answer). */
  let last: unknown;
  const projectedBlocked = (expected: number) =>
    waitFor(
      async () => {
        // A socket the server closed between two polls is not an answer: poll again.
        const response = await fetch(`${cairn.url}/api/v1/query`, {
          method: 'POST',
          headers: {
            ...cairn.auth,
            'Content-Type': 'application/json',
            'Cache-Control': 'no-cache',
          },
          body: JSON.stringify({ metrics: ['blocked_tasks'], period: 'today', business: 'acme' }),
        }).catch(() => undefined);
        if (!response) return undefined;
        last = { status: response.status, body: await response.clone().text() };
        if (!response.ok) return undefined;
        const answer = (await response.json()) as {
          data: Array<{ blocked_tasks: number }>;
          metadata: { source: string };
        };
        return answer.metadata.source === 'rollup_projects_blocked_day' &&
          answer.data[0]?.blocked_tasks === expected
          ? expected
          : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 250 },
    ).catch((error) => {
      throw new Error(`blocked_tasks never reached ${expected}: ${JSON.stringify(last)}`, {
        cause: error,
      });
    });

  /** Every fact written after `sinceId` carries at most MAX_BLOCKED_PER_FACT small changes. */
  const expectBoundedFacts = async (sinceId: number) => {
    const { rows } = await sql<{ kind: string; entries: number; biggest: number; bytes: number }>`
      select kind, coalesce(jsonb_array_length(payload -> 'blocked_changes'), 0) as entries,
        coalesce((select max(abs((c ->> 'change')::int)) from jsonb_array_elements(payload -> 'blocked_changes') c), 0) as biggest,
        pg_column_size(payload) as bytes
      from outbox where id > ${sinceId}`.execute(cairn.db);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(Number(row.entries)).toBeLessThanOrEqual(MAX_BLOCKED_PER_FACT);
      expect(Number(row.biggest)).toBeLessThanOrEqual(127);
      expect(Number(row.bytes)).toBeLessThan(64 * 1024);
    }
    return rows;
  };
  const lastId = async () =>
    Number(
      (await sql<{ id: string }>`select coalesce(max(id), 0) as id from outbox`.execute(cairn.db))
        .rows[0]?.id,
    );

  it('completes, reopens and deletes it; blocked_tasks follows the tasks', {
    timeout: 600_000,
  }, async () => {
    const hub = (await call('POST', '/api/v1/tasks', { business: 'acme', name: 'hub' })).body.data
      .gid as string;
    const other = (await call('POST', '/api/v1/tasks', { business: 'acme', name: 'other' })).body
      .data.gid as string;
    const db = cairn.db;
    // Labels spread over 91 sets, and SOLO dependents with a project each; every tenth also
    // waits for `other`, so it stays blocked whatever happens to the hub.
    await sql`
      insert into tasks (gid, business, name, project, assignee, status, created_at, updated_at,
        created_project, created_assignee, created_status)
      select 'dep-' || i, 'acme', 'dependent ' || i,
        case when i < ${SOLO} then 'solo-' || i else 'p' || (i % 7) end, 'a' || (i % 13),
        case when i % 3 = 0 then 'in_progress' else 'open' end, now(), now(),
        null, null, 'open'
      from generate_series(0, ${DEPENDENTS - 1}) i`.execute(db);
    await sql`
      insert into task_dependencies (task_gid, dependency_gid, business)
      select 'dep-' || i, ${hub}, 'acme' from generate_series(0, ${DEPENDENTS - 1}) i
      union all
      select 'dep-' || i, ${other}, 'acme' from generate_series(0, ${DEPENDENTS - 1}, 10) i`.execute(
      db,
    );
    // What the edges' writes would have recorded: every dependent blocked from now on.
    const hubRow = (await sql<TaskRow>`select * from tasks where gid = ${hub}`.execute(db))
      .rows[0] as TaskRow;
    const arranged = blockedChanges(
      new Map(),
      await blockedCounts(db, { gids: [], dependentsOf: hub }),
    );
    await appendFacts(
      db,
      withBlockedChunks(
        taskFact('blocked_changed', hubRow, new Date(), { blockedChanges: arranged }),
      ),
    );
    expect(await blockedInPostgres(db)).toBe(DEPENDENTS);
    await projectedBlocked(DEPENDENTS);

    let since = await lastId();
    const completed = await call('PUT', `/api/v1/tasks/${hub}`, { status: 'completed' });
    expect(completed.status).toBe(200);
    expect(completed.body.data.status).toBe('completed');
    const facts = await expectBoundedFacts(since);
    // More label sets than one fact carries: the rest rides on blocked_changed facts.
    expect(facts.filter((fact) => fact.kind === 'blocked_changed').length).toBeGreaterThan(0);
    expect(await blockedInPostgres(db)).toBe(DEPENDENTS / 10);
    await projectedBlocked(DEPENDENTS / 10);

    since = await lastId();
    const reopened = await call('PUT', `/api/v1/tasks/${hub}`, { status: 'open' });
    expect(reopened.status).toBe(200);
    await expectBoundedFacts(since);
    expect(await blockedInPostgres(db)).toBe(DEPENDENTS);
    await projectedBlocked(DEPENDENTS);

    since = await lastId();
    const deleted = await call('DELETE', `/api/v1/tasks/${hub}`);
    expect(deleted.status).toBe(204);
    const removed = await expectBoundedFacts(since);
    expect(removed.filter((fact) => fact.kind === 'dependency_removed').length).toBe(DEPENDENTS);
    expect(await blockedInPostgres(db)).toBe(DEPENDENTS / 10);
    await projectedBlocked(DEPENDENTS / 10);
  });
});
