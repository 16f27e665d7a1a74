import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { DIMENSION_NAMES, METRIC_NAMES } from '../libs/analytics/catalog.ts';
import { PERIODS } from '../libs/analytics/period.ts';
import { ALL_SCOPES, authHeader, masterHeader } from './support/auth.ts';
import { type TestConfig, testConfig } from './support/engines.ts';
import { type HttpResult, http } from './support/http.ts';

/**
 * Whatever a caller sends, the answer is never a 5xx: a 422 in the validation shape or another
 * 4xx as a problem document. Inputs mix catalog names with junk so that generated requests get
 * past the schema often enough to reach the parser, the compiler and the engines.
 */
describe('no input breaks the service', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  let auth: Record<string, string>;
  let gids: string[];
  beforeAll(async () => {
    setup = await testConfig({ CAIRN_MASTER_KEY: 'fuzz-master-key-0123456789abcdef' });
    cairn = await startCairn({
      config: setup.config,
      rateLimits: { anonymous: 1e9, user: 1e9, service_account: 1e9 },
    });
    auth = await authHeader(cairn, { businesses: ['fz', 'other'] });
    gids = [];
    for (const business of ['fz', 'fz', 'other']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: auth,
        body: { business, name: `seed in ${business}` },
      });
      gids.push(res.body.data.gid);
    }
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  function expectClientAnswer(res: HttpResult, what: string) {
    const context = `${what} → ${res.status} ${res.text.slice(0, 300)}`;
    expect(res.status, context).toBeLessThan(500);
    if (res.status < 400) return;
    if (res.status === 422 && Array.isArray(res.body?.detail)) {
      expect(res.headers.get('content-type'), context).toMatch(/^application\/json/);
      expect(res.body.detail.length, context).toBeGreaterThan(0);
      for (const issue of res.body.detail) {
        expect(Array.isArray(issue.loc), context).toBe(true);
        expect(typeof issue.msg, context).toBe('string');
        expect(typeof issue.type, context).toBe('string');
      }
      return;
    }
    expect(res.headers.get('content-type'), context).toMatch(/^application\/problem\+json/);
    expect(res.body?.status, context).toBe(res.status);
  }

  const junk = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
  );
  const asText = (value: unknown) =>
    typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  /** Mostly well-formed, sometimes junk: one bad member per request is the interesting case. */
  const orJunk = <T>(arbitrary: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 12, arbitrary }, { weight: 1, arbitrary: junk });
  const nameOr = (names: readonly string[]) => orJunk(fc.constantFrom(...names));
  const zone = orJunk(
    fc.constantFrom(
      'UTC',
      'utc',
      'Europe/Paris',
      'EUROPE/PARIS',
      'America/Argentina/ComodRivadavia',
      'Etc/GMT+5',
      'EST',
      '+05:30',
      'Mars/Olympus',
      '',
      'x'.repeat(65),
    ),
  );
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom('', ' ', "'; drop table tasks; --", '{x:String}', '\u0000', 'é'.repeat(600)),
  );
  const day = fc.oneof(
    fc.constantFrom('2026-02-30', '2026-13-01', '0000-01-01', '9999-12-31', '+275760-09-13'),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    junk,
  );

  it('POST /api/v1/query', async () => {
    const filter = fc.record(
      {
        dimension: nameOr(DIMENSION_NAMES),
        op: nameOr(['eq', 'neq', 'in', 'not_in']),
        values: orJunk(fc.array(text, { maxLength: 4 })),
      },
      { requiredKeys: [] },
    );
    const body = fc.record(
      {
        metrics: orJunk(fc.uniqueArray(nameOr(METRIC_NAMES), { minLength: 1, maxLength: 4 })),
        dimensions: orJunk(fc.uniqueArray(nameOr(DIMENSION_NAMES), { maxLength: 2 })),
        period: nameOr(PERIODS),
        business: nameOr(['fz', 'other', 'nobody']),
        timezone: zone,
        filters: orJunk(fc.array(filter, { maxLength: 2 })),
        order_by: orJunk(
          fc.array(
            fc.record({
              field: nameOr([...METRIC_NAMES, ...DIMENSION_NAMES]),
              direction: nameOr(['asc', 'desc']),
            }),
            { maxLength: 2 },
          ),
        ),
        limit: orJunk(fc.integer({ min: -2, max: 20_000 })),
        extra: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, junk),
      },
      { requiredKeys: [] },
    );
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(body, async (sent) => {
        const res = await http(cairn.url, 'POST', '/api/v1/query', { headers: auth, body: sent });
        statuses.add(res.status);
        expectClientAnswer(res, JSON.stringify(sent));
      }),
      { numRuns: 300 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
    // The generator must reach the engine, not only the schema.
    expect(statuses).toContain(200);
  });

  it('GET dependents and dependencies', async () => {
    const query = fc.record(
      {
        limit: fc.oneof(fc.integer({ min: -5, max: 200 }), text),
        offset: fc.oneof(text, fc.constantFrom('c1', 'c1..', 'c1.W10.AAAA', 'c1.%%%.x')),
        opt_fields: fc.oneof(
          fc.array(nameOr(['status', 'due_on', 'project', 'assignee', 'created_at']), {
            maxLength: 3,
          }),
          text,
        ),
      },
      { requiredKeys: [] },
    );
    const gid = fc.oneof(
      fc.constant('seed'),
      text.filter((s) => s.length > 0),
    );
    await fc.assert(
      fc.asyncProperty(
        gid,
        fc.constantFrom('dependents', 'dependencies'),
        query,
        async (rawGid, listing, params) => {
          const target = rawGid === 'seed' ? (gids[0] as string) : rawGid;
          const search = new URLSearchParams(
            Object.entries(params).map(([k, v]): [string, string] => [
              k,
              Array.isArray(v) ? v.map(asText).join(',') : asText(v),
            ]),
          );
          const path = `/api/v1/tasks/${encodeURIComponent(target)}/${listing}?${search}`;
          expectClientAnswer(await http(cairn.url, 'GET', path, { headers: auth }), path);
        },
      ),
      { numRuns: 150 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
  });

  it('task writes: create, update, dependencies', async () => {
    const task = fc.record(
      {
        business: fc.oneof(fc.constantFrom('fz', 'other', 'nobody'), junk),
        name: fc.oneof(text, junk),
        project: fc.oneof(text, junk),
        assignee: fc.oneof(text, junk),
        status: nameOr(['open', 'in_progress', 'completed', 'cancelled']),
        due_on: day,
        extra: junk,
      },
      { requiredKeys: [] },
    );
    const write = fc.oneof(
      task.map((body) => ({ method: 'POST', path: '/api/v1/tasks', body })),
      task.map((body) => ({ method: 'PUT', path: 'TASK', body })),
      fc
        .record(
          { dependencies: fc.oneof(fc.array(nameOr(['SEED1', 'SEED2']), { maxLength: 3 }), junk) },
          { requiredKeys: [] },
        )
        .map((body) => ({ method: 'POST', path: 'TASK/dependencies', body })),
    );
    await fc.assert(
      fc.asyncProperty(write, fc.boolean(), async (op, raw) => {
        const gid = gids[0] as string;
        const path = op.path.startsWith('TASK')
          ? op.path.replace('TASK', `/api/v1/tasks/${gid}`)
          : op.path;
        const body = JSON.parse(
          JSON.stringify(op.body)
            .replaceAll('"SEED1"', JSON.stringify(gids[1]))
            .replaceAll('"SEED2"', JSON.stringify(gids[2])),
        );
        const res = await http(cairn.url, op.method, path, {
          headers: auth,
          ...(raw ? { raw: JSON.stringify(body).slice(0, -1) } : { body }),
        });
        expectClientAnswer(
          res,
          `${op.method} ${path} ${raw ? '(truncated) ' : ''}${JSON.stringify(body)}`,
        );
      }),
      { numRuns: 200 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
  });

  it('GET /api/v1/tasks with page-number conventions', async () => {
    const key = fc.constantFrom(
      'business',
      'page',
      'per_page',
      'sort',
      'order',
      'status',
      'project',
      'created_at[gte]',
      'created_at[lt]',
      'due_on[gte]',
      'due_on[lt]',
      'due_on[eq]',
      'colour',
    );
    const value = fc.oneof(
      fc.constantFrom('fz', 'other', '1', '0', '-1', '100', '101', 'name', 'asc', 'desc', 'open'),
      day.map(asText),
      text,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 5 }), async (pairs) => {
        const path = `/api/v1/tasks?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, asText(v)]))}`;
        expectClientAnswer(await http(cairn.url, 'GET', path, { headers: auth }), path);
      }),
      { numRuns: 150 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
  });

  it('POST /api/v1/tokens with the master key', async () => {
    const body = fc.record(
      {
        name: orJunk(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), text)),
        scopes: orJunk(fc.uniqueArray(nameOr(ALL_SCOPES), { minLength: 1, maxLength: 3 })),
        businesses: orJunk(
          fc.uniqueArray(fc.oneof({ weight: 5, arbitrary: nameOr(['fz', 'b_2']) }, text), {
            maxLength: 3,
          }),
        ),
        kind: nameOr(['user', 'service_account']),
        expires_in_days: orJunk(fc.integer({ min: -1, max: 4000 })),
      },
      { requiredKeys: ['name', 'scopes', 'businesses'] },
    );
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(body, async (sent) => {
        const res = await http(cairn.url, 'POST', '/api/v1/tokens', {
          headers: masterHeader(cairn),
          body: sent,
        });
        statuses.add(res.status);
        expectClientAnswer(res, JSON.stringify(sent));
      }),
      { numRuns: 100 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
    expect(statuses).toContain(201);
  });

  it('answers bodies nested far deeper than the call stack, or very wide, with a short 422', async () => {
    // Built as text: JSON.stringify itself would run out of stack on these.
    const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const targets: Array<[string, string, string[], Record<string, string>]> = [
      ['POST', '/api/v1/query', ['metrics', 'filters', 'order_by'], auth],
      ['POST', '/api/v1/tasks', ['name', 'due_on'], auth],
      ['PUT', `/api/v1/tasks/${gids[0]}`, ['name', 'project'], auth],
      ['POST', `/api/v1/tasks/${gids[0]}/dependencies`, ['dependencies'], auth],
      ['POST', '/api/v1/tokens', ['scopes', 'businesses'], masterHeader(cairn)],
    ];
    for (const [method, path, members, headers] of targets) {
      for (const member of members) {
        for (const value of [
          deep(100_000),
          `[${deep(50_000)},${deep(50_000)}]`,
          `[${Array.from({ length: 60_000 }, () => '"bad\\u0000"').join(',')}]`,
        ]) {
          const res = await http(cairn.url, method, path, {
            headers: { ...headers, 'content-type': 'application/json' },
            raw: `{"${member}":${value}}`,
          });
          expectClientAnswer(res, `${method} ${path} ${member}`);
          expect(res.status).toBe(422);
          expect(res.body.detail.length).toBeLessThanOrEqual(100);
        }
      }
    }
  });
});
