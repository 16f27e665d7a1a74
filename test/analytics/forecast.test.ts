import { beforeAll, describe, expect, it } from 'vitest';
import { simulateCompletion } from '../../libs/analytics/forecast/monte-carlo.ts';
import { projectAll } from '../support/analytics.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/** `POST /api/v1/forecast` over ten days of known completions. */
describe('forecast', () => {
  let clock = Date.parse('2026-11-10T10:00:00Z');
  const cairn = useCairn({ rateLimits: unlimited(), now: () => new Date(clock) });
  const DAY = 86_400_000;
  // Completions in project p on 2026-11-10 … 2026-11-19; project q completes one on even days.
  const P_DAILY = [3, 0, 2, 5, 1, 0, 4, 2, 3, 0];
  const Q_DAILY = P_DAILY.map((_, i) => (i % 2 === 0 ? 1 : 0));

  const create = async (project: string) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 't', project },
      headers: cairn.auth,
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data.gid as string;
  };
  const forecast = (body: Record<string, unknown>) =>
    http(cairn.url, 'POST', '/api/v1/forecast', {
      body: { business: 'acme', ...body },
      headers: cairn.auth,
    });

  beforeAll(async () => {
    for (let i = 0; i < 12; i++) await create('p');
    for (let i = 0; i < 3; i++) await create('q');
    for (let day = 0; day < P_DAILY.length; day++) {
      clock = Date.parse('2026-11-10T10:00:00Z') + day * DAY;
      for (const [project, count] of [
        ['p', P_DAILY[day]!],
        ['q', Q_DAILY[day]!],
      ] as const) {
        for (let i = 0; i < count; i++) {
          const gid = await create(project);
          const done = await http(cairn.url, 'PUT', `/api/v1/tasks/${gid}`, {
            body: { status: 'completed' },
            headers: cairn.auth,
          });
          expect(done.status).toBe(200);
        }
      }
    }
    clock = Date.parse('2026-11-20T12:00:00Z');
    await projectAll(cairn.engines);
  }, 120_000);

  it('simulates from the whole days of the history, the same answer for the same seed', async () => {
    const body = { project: 'p', history: ['2026-11-10', '2026-11-19'], trials: 5000, seed: 7 };
    const res = await forecast(body);
    expect(res.status, res.text).toBe(200);
    const days = simulateCompletion({
      daily: P_DAILY,
      open: 12,
      trials: 5000,
      seed: 7,
      quantiles: [0.5, 0.85, 0.95],
    });
    const date = (d: number | null) =>
      d === null ? null : new Date(Date.parse('2026-11-20') + d * DAY).toISOString().slice(0, 10);
    expect(res.body.data).toEqual({
      open_tasks: 12,
      throughput_per_day: 2,
      completion: { p50: date(days[0]!), p85: date(days[1]!), p95: date(days[2]!) },
      completion_days: { p50: days[0], p85: days[1], p95: days[2] },
    });
    // Twelve tasks at two a day: about six days, more in the unlucky futures.
    expect(days[0]).toBeGreaterThanOrEqual(4);
    expect(days[2]).toBeGreaterThanOrEqual(days[0]!);
    expect(res.body.metadata).toMatchObject({
      business: 'acme',
      history: { name: 'custom', timezone: 'UTC', days: 10 },
      trials: 5000,
      seed: 7,
    });
    const again = await forecast(body);
    expect(again.body.data).toEqual(res.body.data);
  });

  it('counts every project when none is named, and filters as /query does', async () => {
    const all = await forecast({ history: ['2026-11-10', '2026-11-19'], seed: 1 });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toMatchObject({ open_tasks: 15, throughput_per_day: 2.5 });
    expect(all.body.metadata.trials).toBe(10_000);
    const filtered = await forecast({
      history: ['2026-11-10', '2026-11-19'],
      filters: [{ dimension: 'project', op: 'in', values: ['q'] }],
      seed: 1,
    });
    expect(filtered.body.data).toMatchObject({ open_tasks: 3, throughput_per_day: 0.5 });
  });

  it('leaves out today, which is not over', async () => {
    const res = await forecast({ project: 'p', history: 'last_7_days', seed: 3 });
    expect(res.status, res.text).toBe(200);
    const { days } = res.body.metadata.history;
    expect(days).toBeLessThanOrEqual(7);
    const recent = P_DAILY.slice(P_DAILY.length - days);
    expect(res.body.data.throughput_per_day).toBeCloseTo(
      recent.reduce((a, b) => a + b, 0) / days,
      4,
    );
  });

  it('answers today when nothing is open, and null with a warning when nothing ever finishes', async () => {
    const none = await forecast({ project: 'nothing', history: ['2026-11-10', '2026-11-19'] });
    expect(none.body.data.completion).toEqual({
      p50: '2026-11-20',
      p85: '2026-11-20',
      p95: '2026-11-20',
    });
    // q completed nothing on the 11th.
    const stuck = await forecast({ project: 'q', history: ['2026-11-11', '2026-11-11'] });
    expect(stuck.status, stuck.text).toBe(200);
    expect(stuck.body.data.completion).toEqual({ p50: null, p85: null, p95: null });
    expect(stuck.body.warnings.map((w: { code: string }) => w.code)).toContain('beyond_horizon');
  });

  it('says so when the history holds no whole day yet', async () => {
    const res = await forecast({ project: 'p', history: 'today' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ open_tasks: 12, throughput_per_day: 0 });
    expect(res.body.data.completion).toEqual({ p50: null, p85: null, p95: null });
    expect(res.body.metadata.history.days).toBe(0);
    expect(res.body.warnings.map((w: { code: string }) => w.code)).toEqual(['empty_history']);
  });

  it('answers 422 at the member at fault', async () => {
    const cases: Array<[Record<string, unknown>, Array<string | number>]> = [
      [{ history: 'last_7_days', trials: 999 }, ['body', 'trials']],
      [{ history: 'last_7_days', trials: 100_001 }, ['body', 'trials']],
      [{ history: 'last_7_days', seed: -1 }, ['body', 'seed']],
      [{}, ['body', 'history']],
      [{ history: 'last_7_weeks' }, ['body', 'history']],
      [{ history: ['2026-11-19', '2026-11-10'] }, ['body', 'history']],
      [{ history: ['2026-11-10', 'soon'] }, ['body', 'history']],
      [{ history: 'last_7_days', period: 'last_7_days' }, ['body', 'period']],
      [
        { history: 'last_7_days', filters: [{ dimension: 'colour', op: 'eq', values: ['x'] }] },
        ['body', 'filters', 0],
      ],
    ];
    for (const [body, loc] of cases) {
      const res = await forecast(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/json');
      const locs = res.body.detail.map((issue: { loc: unknown[] }) =>
        issue.loc.slice(0, loc.length),
      );
      expect(locs, JSON.stringify(body)).toContainEqual(loc);
    }
  });

  it('needs analytics:read, and 404s a business outside the token', async () => {
    const tasksOnly = await cairn.token({ businesses: ['acme'], scopes: ['workflows:read'] });
    const refused = await http(cairn.url, 'POST', '/api/v1/forecast', {
      body: { business: 'acme', history: 'last_7_days' },
      headers: tasksOnly,
    });
    expect(refused.status).toBe(403);
    const foreign = await forecast({ business: 'beta', history: 'last_7_days' });
    expect(foreign.status).toBe(404);
  });
});
