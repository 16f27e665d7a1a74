import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest } from './otlp-protobuf.ts';

/** One span as an OTLP receiver sees it (ids in hex), attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  service: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>;
  links?: Array<{ traceId: string; spanId: string }>;
}

interface OtlpBody {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: OtlpValue }> };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

const flat = (attributes: Array<{ key: string; value: OtlpValue }> = []) =>
  Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue),
    ]),
  );

/**
 * A real OTLP/HTTP receiver: the SDK's exporter POSTs to /v1/traces, as it would to a collector,
 * in JSON or in protobuf as its `Content-Type` says, and every span it sends is kept here.
 */
export function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  /** `METHOD path content-type` of each export. */
  const paths: string[] = [];
  let server: Server | undefined;
  const keep = (body: OtlpBody) => {
    for (const resource of body.resourceSpans ?? []) {
      const service = flat(resource.resource?.attributes)['service.name'];
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: flat(span.attributes),
            links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            service,
          });
        }
      }
    }
  };
  return {
    spans,
    paths,
    url: '',
    async start() {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const type = req.headers['content-type'] ?? '';
          paths.push(`${req.method} ${req.url} ${type}`);
          const body = Buffer.concat(chunks);
          if (type.startsWith('application/x-protobuf')) {
            keep(decodeTraceRequest(body));
            // An empty ExportTraceServiceResponse: full success.
            res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
          } else {
            keep(JSON.parse(body.toString('utf8')));
            res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
          }
        });
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () =>
      new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
}
