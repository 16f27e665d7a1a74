import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

describe('write → outbox → projector → ClickHouse → query', () => {
  const cairn = useCairn({ businesses: ['e2e', 'burst', 'far'] });

  const todayCount = async (business?: string) => {
    const res = await http(cairn.url, 'POST', '/api/v1/query', {
      body: {
        metrics: ['tasks_created'],
        dimensions: ['day'],
        period: 'today',
        ...(business ? { business } : {}),
      },
      headers: cairn.auth,
    });
    expect(res.status).toBe(200);
    return res.body;
  };

  it("creates a task, reads it back, and counts it in today's tasks_created", async () => {
    const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'e2e', name: 'Draft the plan', project: 'alpha', due_on: '2026-12-01' },
      headers: cairn.auth,
    });
    expect(created.status).toBe(201);
    const task = created.body.data;
    expect(task).toMatchObject({
      resource_type: 'task',
      name: 'Draft the plan',
      business: 'e2e',
      project: 'alpha',
      status: 'open',
      due_on: '2026-12-01',
    });
    expect(created.headers.get('location')).toBe(`/api/v1/tasks/${task.gid}`);

    const fetched = await http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}`, {
      headers: cairn.auth,
    });
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).toEqual(task);

    const today = new Date().toISOString().slice(0, 10);
    const answer = await waitFor(async () => {
      const body = await todayCount('e2e');
      // Today's bucket is always answered (zero-filled); wait for the task to be counted in it.
      return body.data[0]?.tasks_created > 0 ? body : undefined;
    });
    expect(answer.data).toEqual([{ day: today, tasks_created: 1 }]);
    expect(answer.metadata.query.period).toMatchObject({ name: 'today', timezone: 'UTC' });
    expect(answer.metadata.row_count).toBe(1);
    expect(Date.parse(answer.metadata.data_as_of)).not.toBeNaN();
  });

  it('counts a burst of writes exactly once each', async () => {
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        http(cairn.url, 'POST', '/api/v1/tasks', {
          body: { business: 'burst', name: `task ${i}` },
          headers: cairn.auth,
        }),
      ),
    );
    const answer = await waitFor(async () => {
      const body = await todayCount('burst');
      return body.data[0]?.tasks_created === 25 ? body : undefined;
    });
    expect(answer.data).toHaveLength(1);
    const week = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created'], period: 'last_7_days', business: 'burst' },
      headers: cairn.auth,
    });
    expect(week.body.data).toEqual([{ tasks_created: 25 }]);
  });

  it('keeps due dates far in the past and future exact, and refuses those it cannot hold', async () => {
    for (const [due_on, edge] of [
      ['1950-06-01', 'past'],
      ['2250-01-01', 'future'],
      ['1900-01-01', 'first'],
      ['2299-12-31', 'last'],
    ]) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'far', name: `due ${edge}`, due_on },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
    }
    for (const [due_on, type] of [
      ['1899-12-31', 'greater_than_equal'],
      ['2300-01-01', 'less_than_equal'],
    ]) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'far', name: 'out of range', due_on },
        headers: cairn.auth,
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'due_on'], type })]);
    }
    // A Date column would clamp 1950 to 1970 and 2250 to 2149; the overdue count would hold,
    // but the stored dates below would not.
    const answer = await waitFor(async () => {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body: { metrics: ['open_tasks', 'overdue_tasks'], period: 'today', business: 'far' },
        headers: cairn.auth,
      });
      return res.body.data?.[0]?.open_tasks === 4 ? res.body : undefined;
    });
    expect(answer.data).toEqual([{ open_tasks: 4, overdue_tasks: 2 }]);
    const rows = await cairn.engines.clickhouse.client.query({
      query: "SELECT toString(due_on) AS due_on FROM facts WHERE business = 'far' ORDER BY due_on",
      format: 'JSONEachRow',
    });
    expect(await rows.json()).toEqual([
      { due_on: '1900-01-01' },
      { due_on: '1950-06-01' },
      { due_on: '2250-01-01' },
      { due_on: '2299-12-31' },
    ]);
  });
});
