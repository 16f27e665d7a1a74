import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../libs/config/config.ts';
import { createLogger } from '../libs/observability/logger.ts';
import { useCairn } from './support/cairn.ts';
import { waitFor } from './support/engines.ts';
import { http } from './support/http.ts';
import { otlpReceiver, type ReceivedSpan } from './support/otlp-receiver.ts';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const OTLP_SERVER = 2;

// Both protocols must bring the collector the same span tree: every test runs with each.
describe.each([
  { protocol: 'http/json', contentType: 'application/json' },
  { protocol: 'http/protobuf', contentType: 'application/x-protobuf' },
])('tracing with an OTLP endpoint ($protocol)', ({ protocol, contentType }) => {
  const receiver = otlpReceiver();
  const logLines: string[] = [];
  beforeAll(() => receiver.start());
  afterAll(() => receiver.close());
  const cairn = useCairn(() => ({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: 'cairn-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    },
    logger: createLogger('info', {
      write: (line: string) => {
        logLines.push(line);
      },
    }),
  }));

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
