import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../libs/config/config.ts';
import { createLogger } from '../../libs/observability/logger.ts';
import { type TestCairnOptions, useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { otlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const OTLP_SERVER = 2;

/** A Cairn sending its spans to an OTLP receiver of its own, with these `OTEL_*` settings. */
function useTracedCairn(env: Record<string, string>, options: Omit<TestCairnOptions, 'env'> = {}) {
  const receiver = otlpReceiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.close());
  const cairn = useCairn(() => ({
    ...options,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', ...env },
  }));
  return { receiver, cairn };
}

// Both protocols must bring the collector the same span tree: every test runs with each.
describe.each([
  { protocol: 'http/json', contentType: 'application/json' },
  { protocol: 'http/protobuf', contentType: 'application/x-protobuf' },
])('tracing with an OTLP endpoint ($protocol)', ({ protocol, contentType }) => {
  const logLines: string[] = [];
  const { receiver, cairn } = useTracedCairn(
    { OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'cairn-under-test' },
    {
      logger: createLogger('info', {
        write: (line: string) => {
          logLines.push(line);
        },
      }),
    },
  );

  const traceId = hex(16);
  const childrenOf = (parent: ReceivedSpan) =>
    receiver.spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);
  let write: ReceivedSpan;

  it('continues the caller’s traceparent through a write, down to each Postgres statement', async () => {
    const callerSpan = hex(8);
    const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 'traced' },
      headers: { ...cairn.auth, traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(created.status).toBe(201);
    const answered = created.headers.get('traceparent') ?? '';
    expect(answered).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    write = await waitFor(async () =>
      receiver.spans.find((s) => s.traceId === traceId && s.parentSpanId === callerSpan),
    );
    expect(write).toMatchObject({
      name: 'POST /api/v1/tasks',
      kind: OTLP_SERVER,
      service: 'cairn-under-test',
      attributes: { 'http.route': '/api/v1/tasks', 'http.response.status_code': 201 },
    });
    expect(answered).toBe(`00-${traceId}-${write.spanId}-01`);
    expect(receiver.paths[0]).toBe(`POST /v1/traces ${contentType}`);

    const children = childrenOf(write);
    expect(children.map((s) => s.name)).toContain('authenticate');
    const statements = children.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    expect(
      statements.some((s) => /insert into "?outbox"?/i.test(String(s.attributes['db.query.text']))),
    ).toBe(true);
    // The statement text is kept with its placeholders; the values never reach a span.
    expect(JSON.stringify(statements)).not.toContain('traced');

    // The fact carries the write's trace context, for the projector to link to.
    const facts = await cairn.db
      .selectFrom('outbox')
      .select(['trace_context'])
      .where('task_gid', '=', created.body.data.gid)
      .execute();
    expect(facts.map((f) => f.trace_context)).toEqual([`00-${traceId}-${write.spanId}-01`]);

    const line = logLines
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request' && l.status === 201);
    expect(line).toMatchObject({ trace_id: traceId, span_id: write.spanId });
  });

  it('starts each projector batch as its own trace, linked to the writes whose facts it carries', async () => {
    const batch = await waitFor(async () =>
      receiver.spans.find(
        (s) =>
          s.name === 'projector batch' &&
          s.links.some((l) => l.traceId === traceId && l.spanId === write.spanId),
      ),
    );
    expect(batch.parentSpanId).toBe('');
    expect(batch.traceId).not.toBe(traceId);
    const inserted = await waitFor(async () =>
      childrenOf(batch).find((s) => s.attributes['db.system.name'] === 'clickhouse'),
    );
    expect(inserted.name).toBe('clickhouse INSERT');
    expect(inserted.attributes['cairn.clickhouse.query_id']).toMatch(/^[0-9a-f-]{36}$/);
    // Its checkpoint moves in Postgres under the same batch.
    expect(childrenOf(batch).some((s) => s.attributes['db.system.name'] === 'postgresql')).toBe(
      true,
    );
  });

  it('traces a query: admission wait, cache lookup and the ClickHouse statement with its query_id', async () => {
    const callerSpan = hex(8);
    const query = { metrics: ['tasks_created'], dimensions: ['business'], period: 'today' };
    await waitFor(async () => {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body: query,
        headers: { ...cairn.auth, traceparent: `00-${traceId}-${callerSpan}-01` },
      });
      return res.body?.data?.[0]?.tasks_created === 1;
    });
    const request = await waitFor(async () =>
      receiver.spans.find((s) => s.parentSpanId === callerSpan && s.traceId === traceId),
    );
    expect(request.name).toBe('POST /api/v1/query');
    // Spans are sent in batches: wait for the statement, which ends before its request.
    const statement = await waitFor(async () =>
      descendantsOf(request).find((s) => s.name.startsWith('clickhouse SELECT')),
    );
    expect(statement.attributes['cairn.clickhouse.query_id']).toMatch(/^[0-9a-f-]{36}$/);
    const names = descendantsOf(request).map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining(['authenticate', 'admission wait', 'cache lookup']),
    );
  });

  const descendantsOf = (root: ReceivedSpan): ReceivedSpan[] =>
    childrenOf(root).flatMap((child) => [child, ...descendantsOf(child)]);

  it('puts the trace id in problem bodies, and nothing for an unsampled caller', async () => {
    const missing = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', {
      headers: { ...cairn.auth, traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.trace_id).toBe(traceId);
    expect(missing.body.request_id).toBeTypeOf('string');

    const unsampledTrace = hex(16);
    const quiet = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', {
      headers: { ...cairn.auth, traceparent: `00-${unsampledTrace}-${hex(8)}-00` },
    });
    expect(quiet.status).toBe(404);
    expect(quiet.body.trace_id).toBeUndefined();
    expect(quiet.headers.get('traceparent')).toMatch(
      new RegExp(`^00-${unsampledTrace}-[0-9a-f]{16}-00$`),
    );

    // Without a traceparent the request starts a trace of its own.
    const fresh = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', {
      headers: cairn.auth,
    });
    expect(fresh.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh.body.trace_id).not.toBe(traceId);
    expect(fresh.headers.get('traceparent')).toContain(fresh.body.trace_id);
    await waitFor(async () => receiver.spans.some((s) => s.traceId === fresh.body.trace_id));
    expect(receiver.spans.some((s) => s.traceId === unsampledTrace)).toBe(false);
  });

  it('serves exemplars naming traces when the scraper asks for OpenMetrics', async () => {
    const open = await fetch(`${cairn.url}/metrics`, {
      headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;q=0.5' },
    });
    expect(open.headers.get('content-type')).toContain('application/openmetrics-text');
    const text = await open.text();
    expect(text.trimEnd().endsWith('# EOF')).toBe(true);
    const exemplar = new RegExp(
      `^http_request_duration_seconds_bucket\\{[^}]*route="/api/v1/tasks"[^}]*\\} \\d+ # \\{trace_id="${traceId}",span_id="${write.spanId}"\\}`,
      'm',
    );
    expect(text).toMatch(exemplar);
    expect(text).toMatch(
      /^cairn_analytics_query_duration_seconds_bucket\{.*\} \d+ # \{trace_id="[0-9a-f]{32}"/m,
    );
    expect(text).toMatch(
      /^cairn_projector_batch_duration_seconds_bucket\{.*\} \d+ # \{trace_id="[0-9a-f]{32}"/m,
    );

    // The classic format is untouched by an OpenMetrics rendering (counters keep `_total`).
    const classic = await http(cairn.url, 'GET', '/metrics');
    expect(classic.headers.get('content-type')).toContain('text/plain');
    expect(classic.text).toMatch(/^cairn_projector_facts_projected_total\{/m);
    expect(classic.text).not.toContain('# {trace_id');
  });
});

/**
 * A caller asking to be sampled every way it can: the sampled flag, on a trace id that
 * `traceidratio` always samples (its hash of the id is `n`, under the bound of any ratio from
 * one in a million up).
 */
const askingToBeSampled = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${hex(8)}-01`;
const traceOf = (traceparent: string) => traceparent.split('-')[1] as string;

// A ratio so small that, in these tests, a request without parent is never sampled: only a
// caller's traceparent could have one sampled.
describe.each([
  { sampler: 'parentbased_traceidratio', ratio: '0.000001' },
  { sampler: 'traceidratio', ratio: '0.000001' },
])(
  'tracing: a traceparent decides sampling only with a valid token ($sampler)',
  ({ sampler, ratio }) => {
    const { receiver, cairn } = useTracedCairn({
      OTEL_TRACES_SAMPLER: sampler,
      OTEL_TRACES_SAMPLER_ARG: ratio,
    });
    const get = (path: string, headers: Record<string, string>) =>
      http(cairn.url, 'GET', path, { headers });

    it('an anonymous or invalid caller keeps its trace id but is never sampled for it', async () => {
      const callers: [string, string, Record<string, string>][] = [
        ['no token', '/api/v1/tasks/no-such-task', {}],
        [
          'a made-up token',
          '/api/v1/tasks/no-such-task',
          { Authorization: `Bearer cairn_${hex(32)}` },
        ],
        ['a free path', '/healthz', {}],
      ];
      const sent: string[] = [];
      for (const [who, path, headers] of callers) {
        for (let i = 0; i < 5; i++) {
          const traceparent = askingToBeSampled(1 + sent.length);
          const res = await get(path, { ...headers, traceparent });
          expect(res.status, who).toBe(path === '/healthz' ? 200 : 401);
          // Correlated (the same trace id), not sampled, and no trace named in the problem.
          expect(res.headers.get('traceparent'), who).toMatch(
            new RegExp(`^00-${traceOf(traceparent)}-[0-9a-f]{16}-00$`),
          );
          expect(res.body.trace_id, who).toBeUndefined();
          sent.push(traceOf(traceparent));
        }
      }
      // A token holder's request, sent last: once its spans are in, none of the others' would
      // still be on the way (one exporter, batches in order).
      const trusted = askingToBeSampled(100);
      const res = await get('/api/v1/tasks/no-such-task', { ...cairn.auth, traceparent: trusted });
      expect(res.status).toBe(404);
      await waitFor(async () => receiver.spans.some((s) => s.traceId === traceOf(trusted)));
      expect(receiver.spans.filter((s) => sent.includes(s.traceId))).toEqual([]);
    });

    it('a valid token’s traceparent is followed, its credential check recorded under it', async () => {
      const traceparent = askingToBeSampled(200);
      const [, traceId, callerSpan] = traceparent.split('-') as [string, string, string];
      const res = await get('/api/v1/tasks/no-such-task', { ...cairn.auth, traceparent });
      expect(res.status).toBe(404);
      expect(res.body.trace_id).toBe(traceId);
      const request = await waitFor(async () =>
        receiver.spans.find((s) => s.traceId === traceId && s.parentSpanId === callerSpan),
      );
      expect(res.headers.get('traceparent')).toBe(`00-${traceId}-${request.spanId}-01`);
      expect(request.name).toBe('GET /api/v1/tasks/:gid');
      const check = await waitFor(async () =>
        receiver.spans.find((s) => s.parentSpanId === request.spanId && s.name === 'authenticate'),
      );
      expect(check.traceId).toBe(traceId);

      // Without the flag, on an ordinary id, the holder's request is left out as the sampler says.
      const quiet = await get('/api/v1/tasks/no-such-task', {
        ...cairn.auth,
        traceparent: `00-${hex(16)}-${hex(8)}-00`,
      });
      expect(quiet.body.trace_id).toBeUndefined();
    });
  },
);

/**
 * A random trace id that `traceidratio` hashes (the XOR of its four 32-bit words) to `hash`:
 * 0xffffffff is over the bound of any ratio below 1, so it samples no span of that trace by id.
 */
function hashingTo(hash: number): string {
  const words = [1, 2, 3].map(() => randomBytes(4).readUInt32BE());
  const first = words.reduce((acc, word) => (acc ^ word) >>> 0, hash);
  return [first, ...words].map((word) => word.toString(16).padStart(8, '0')).join('');
}

describe('tracing: an anonymous request the ratio keeps is traced whole (traceidratio)', () => {
  const { receiver, cairn } = useTracedCairn({
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.9',
  });

  it('its own spans follow its draw, not the hash of the trace id the caller chose', async () => {
    const kept: { traceId: string; spanId: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const traceId = hashingTo(0xffffffff);
      const res = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', {
        headers: { traceparent: `00-${traceId}-${hex(8)}-00` },
      });
      expect(res.status).toBe(401);
      const [, answered, spanId, flags] = (res.headers.get('traceparent') ?? '').split('-');
      expect(answered).toBe(traceId);
      if (flags === '01') kept.push({ traceId, spanId: spanId as string });
    }
    // Nine in ten by the draw: none kept in ten would be a one in ten billion chance.
    expect(kept.length).toBeGreaterThan(0);
    for (const { traceId, spanId } of kept) {
      await waitFor(async () => receiver.spans.some((s) => s.spanId === spanId));
      const check = await waitFor(async () =>
        receiver.spans.find((s) => s.parentSpanId === spanId && s.name === 'authenticate'),
      );
      expect(check.traceId).toBe(traceId);
    }
  });
});

describe('tracing without an OTLP endpoint', () => {
  const cairn = useCairn();

  it('starts no SDK: no traceparent answered, no trace_id in problems', async () => {
    const missing = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', {
      headers: { ...cairn.auth, traceparent: `00-${hex(16)}-${hex(8)}-01` },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.trace_id).toBeUndefined();
    expect(missing.headers.get('traceparent')).toBeNull();
  });

  it('reads the standard OTEL_* variables', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_SDK_DISABLED: 'true',
      }).tracing,
    ).toBeUndefined();
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=ops',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
      }).tracing,
    ).toMatchObject({
      url: 'http://collector:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'ops' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.01,
      serviceName: 'cairn',
      resourceAttributes: { 'deployment.environment': 'prod' },
      protocol: 'http/json',
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }).tracing?.protocol,
    ).toBe('http/protobuf');
    expect(() =>
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/json or http\/protobuf \(got "grpc"\)/);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp' }).tracing
        ?.url,
    ).toBe('https://traces.example/otlp');
    expect(() =>
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER_ARG: '2' }),
    ).toThrow(/OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    expect(() =>
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_TRACES_SAMPLER: 'sometimes',
      }),
    ).toThrow(/OTEL_TRACES_SAMPLER must be one of/);
  });
});
