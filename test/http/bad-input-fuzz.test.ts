import { brotliCompressSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIMENSION_NAMES, METRIC_NAMES } from '../../libs/analytics/catalog/catalog.ts';
import { PERIODS } from '../../libs/analytics/period/period.ts';
import { ALL_SCOPES, randomSecret } from '../support/auth.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { type HttpResult, http } from '../support/http.ts';

/**
 * Whatever a caller sends, the answer is never a 5xx: a 422 in the validation shape or another
 * 4xx as a problem document. Inputs mix catalog names with junk so that generated requests get
 * past the schema often enough to reach the parser, the compiler and the engines.
 */
describe('no input breaks the service', () => {
  let gids: string[];
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    rateLimits: unlimited(),
    businesses: ['fz', 'other'],
    // What a body is answered matters here, not how fast: a busy machine may take longer than
    // the production deadline to check a deeply nested one (large-bodies-faults tests that).
    bodyChecks: { timeoutMs: 60_000 },
  });
  beforeAll(async () => {
    gids = [];
    for (const business of ['fz', 'fz', 'other']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: cairn.auth,
        body: { business, name: `seed in ${business}` },
      });
      gids.push(res.body.data.gid);
    }
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
  /** encodeURIComponent, which throws on a lone surrogate: send its UTF-8-shaped bytes instead. */
  const encode = (value: string) => {
    try {
      return encodeURIComponent(value);
    } catch {
      return '%ED%A0%80';
    }
  };
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
      'SystemV/AST4',
      'SystemV/EST5EDT',
      '',
      'x'.repeat(65),
    ),
  );
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom('', ' ', "'; drop table tasks; --", '{x:String}', '\u0000', 'é'.repeat(600)),
    // Lone UTF-16 surrogates, alone and inside text.
    fc.constantFrom('\ud800', 'a\udfff', '\udc00\ud800', 'x\ud83d'),
  );
  /** Numbers as a lenient parser would read them. */
  const numberish = fc.constantFrom(
    'Infinity',
    '-Infinity',
    '1e400',
    '1e1',
    '0x5',
    '+3',
    ' 1',
    '1 ',
    '-0',
    '007',
    'NaN',
    '5.0',
    '9'.repeat(40),
  );
  /** Date-times just outside what the engines agree on. */
  const instantish = fc.constantFrom(
    '2026-06-30T23:59:60Z',
    '2026-12-31T23:59:60+00:00',
    '9999-12-31T23:59:59-23:59',
    '0001-01-01T00:00:00+23:59',
    '2026-01-01T00:00:00+14:01',
    '2026-01-01T00:00:00-14:00',
    '2026-01-01T24:00:00Z',
    '2026-01-01t00:00:00z',
  );
  const day = fc.oneof(
    fc.constantFrom('2026-02-30', '2026-13-01', '0000-01-01', '9999-12-31', '+275760-09-13'),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    junk,
  );

  it('POST /api/v1/query', { timeout: 180_000 }, async () => {
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
        offset: orJunk(fc.integer({ min: -2, max: 20_000 })),
        extra: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, junk),
      },
      { requiredKeys: [] },
    );
    // Each member of `body` is junk now and then, so few of its requests are valid as a whole;
    // a quarter of the runs draw from catalog names only, so the engines are always reached.
    const wellFormed = fc.record(
      {
        metrics: fc.uniqueArray(fc.constantFrom(...METRIC_NAMES), { minLength: 1, maxLength: 4 }),
        dimensions: fc.uniqueArray(fc.constantFrom(...DIMENSION_NAMES), { maxLength: 2 }),
        period: fc.constantFrom(...PERIODS),
        business: fc.constant('fz'),
        timezone: fc.constantFrom('UTC', 'utc', 'Europe/Paris', 'EUROPE/PARIS', 'Asia/Kolkata'),
        limit: fc.integer({ min: 1, max: 1_000 }),
      },
      { requiredKeys: ['metrics', 'business'] },
    );
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: body }, wellFormed), async (sent) => {
        const res = await http(cairn.url, 'POST', '/api/v1/query', {
          headers: cairn.auth,
          body: sent,
        });
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
        limit: fc.oneof(fc.integer({ min: -5, max: 200 }), text, numberish),
        offset: fc.oneof(
          text,
          fc.constantFrom(
            'c1',
            'c1..',
            'c1.W10.AAAA',
            'c1.%%%.x',
            'c2',
            'c2.',
            'c2.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
            'c2.%%%',
          ),
        ),
        opt_fields: fc.oneof(
          fc.array(nameOr(['status', 'due_on', 'project', 'assignee', 'created_at']), {
            maxLength: 3,
          }),
          text,
        ),
        status: fc.oneof(
          fc.array(nameOr(['open', 'in_progress', 'completed', 'cancelled']), { maxLength: 3 }),
          text,
        ),
        depth: orJunk(fc.constantFrom('1', 'all', '2', 'ALL', '', '0')),
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
          const path = `/api/v1/tasks/${encode(target)}/${listing}?${search}`;
          expectClientAnswer(await http(cairn.url, 'GET', path, { headers: cairn.auth }), path);
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
        due_on: fc.oneof(day, instantish),
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
          headers: cairn.auth,
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
      'assignee',
      'q',
      'opt_fields',
      'created_at[gte]',
      'created_at[lt]',
      'updated_at[gte]',
      'updated_at[lt]',
      'completed_at[gte]',
      'completed_at[lt]',
      'due_on[gte]',
      'due_on[lt]',
      'due_on[eq]',
      'colour',
    );
    const value = fc.oneof(
      fc.constantFrom('fz', 'other', '1', '0', '-1', '100', '101', 'name', 'asc', 'desc', 'open'),
      fc.constantFrom(
        'null',
        'open,in_progress',
        'a,null',
        ',',
        'seed',
        'SEED',
        '%_\\',
        'status,due_on',
      ),
      day.map(asText),
      text,
      numberish,
      instantish,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 5 }), async (pairs) => {
        const path = `/api/v1/tasks?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, asText(v)]))}`;
        expectClientAnswer(await http(cairn.url, 'GET', path, { headers: cairn.auth }), path);
      }),
      { numRuns: 150 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
  });

  it('GET /api/v1/tasks/{gid} with opt_fields', async () => {
    const query = fc.array(
      fc.tuple(
        fc.constantFrom('opt_fields', 'opt_fields', 'colour'),
        fc.oneof(
          fc.array(nameOr(['status', 'due_on', 'business', 'completed_at']), { maxLength: 3 }),
          text,
        ),
      ),
      { maxLength: 3 },
    );
    await fc.assert(
      fc.asyncProperty(query, async (pairs) => {
        const search = new URLSearchParams(
          pairs.map(([k, v]): [string, string] => [
            k,
            Array.isArray(v) ? v.map(asText).join(',') : asText(v),
          ]),
        );
        const path = `/api/v1/tasks/${gids[0]}?${search}`;
        expectClientAnswer(await http(cairn.url, 'GET', path, { headers: cairn.auth }), path);
      }),
      { numRuns: 60 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
  });

  it('If-Match and If-None-Match on task reads and writes', async () => {
    const tag = fc.oneof(
      fc.constantFrom('*', '"1"', 'W/"1"', '"1", "2"', '""', '"', 'W/', ',', '"1",,"2"', '1'),
      fc.string({ maxLength: 20 }).filter((value) => /^[\x20-\x7e]*$/.test(value)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'PUT', 'DELETE'),
        fc.constantFrom('If-Match', 'If-None-Match'),
        tag,
        async (method, header, value) => {
          // A throwaway task, so a DELETE that passes leaves the seeds alone.
          const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
            headers: cairn.auth,
            body: { business: 'fz', name: 'conditional' },
          });
          const path = `/api/v1/tasks/${created.body.data.gid}`;
          const res = await http(cairn.url, method, path, {
            headers: { ...cairn.auth, [header]: value },
            ...(method === 'PUT' ? { body: { name: 'changed' } } : {}),
          });
          expectClientAnswer(res, `${method} ${header}: ${value}`);
        },
      ),
      { numRuns: 60 * Number(process.env.FUZZ_TIMES ?? 1) },
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
          headers: cairn.master,
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
      ['POST', '/api/v1/query', ['metrics', 'filters', 'order_by'], cairn.auth],
      ['POST', '/api/v1/tasks', ['name', 'due_on'], cairn.auth],
      ['PUT', `/api/v1/tasks/${gids[0]}`, ['name', 'project'], cairn.auth],
      ['POST', `/api/v1/tasks/${gids[0]}/dependencies`, ['dependencies'], cairn.auth],
      ['POST', '/api/v1/tokens', ['scopes', 'businesses'], cairn.master],
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
  it('every route, with broken percent-encodings and corrupt compressed bodies', async () => {
    const segment = fc.oneof(
      fc.constant('GID'),
      fc.constantFrom('%', '%%', '%E0%A4%A', '%zz', '%C0%80', '%ED%A0%80', '%00', 'a%2', '%FF'),
      text.filter((s) => s.length > 0).map(encode),
    );
    const query = fc.array(
      fc.tuple(
        fc.constantFrom('limit', 'offset', 'page', 'per_page', 'business', 'created_at[gte]', '%'),
        fc.oneof(fc.constantFrom('%', '%zz', '%E0%A4%A', '%ED%A0%80', '1%'), numberish, instantish),
      ),
      { maxLength: 3 },
    );
    const json = Buffer.from(JSON.stringify({ business: 'fz', name: 'zipped' }));
    const gzip = gzipSync(json);
    const body = fc.oneof(
      fc.constant({ encoding: undefined, bytes: json }),
      fc.constantFrom(
        { encoding: 'gzip', bytes: Buffer.from('not gzip at all') },
        { encoding: 'gzip', bytes: gzip.subarray(0, gzip.length - 5) },
        { encoding: 'br', bytes: Buffer.from('not brotli at all') },
        { encoding: 'br', bytes: brotliCompressSync(json).subarray(0, 4) },
        { encoding: 'deflate', bytes: Buffer.from('nope') },
        { encoding: 'x-unknown', bytes: json },
        { encoding: 'gzip', bytes: gzipSync(Buffer.alloc(4 * 1_048_576, 32)) },
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cairn.routes),
        segment,
        query,
        body,
        async (route, rawSegment, pairs, sent) => {
          const path = route.path.replace(/:[a-z_]+/g, () =>
            rawSegment === 'GID' ? (gids[0] as string) : rawSegment,
          );
          const search = pairs.map(([k, v]) => `${k}=${v}`).join('&');
          const url = `${path}${search ? `?${search}` : ''}`;
          const headers: Record<string, string> = {
            ...(route.scope === 'master' ? cairn.master : cairn.auth),
          };
          let bytes: Buffer | undefined;
          if (route.method === 'post' || route.method === 'put') {
            headers['content-type'] = 'application/json';
            if (sent.encoding) headers['content-encoding'] = sent.encoding;
            bytes = sent.bytes;
          }
          const answer = await http(cairn.url, route.method.toUpperCase(), url, {
            headers,
            raw: bytes,
          });
          expectClientAnswer(answer, `${route.method} ${url} ${sent.encoding ?? 'identity'}`);
        },
      ),
      { numRuns: 200 * Number(process.env.FUZZ_TIMES ?? 1) },
    );
  });
});
