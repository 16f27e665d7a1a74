import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config/config.ts';

/**
 * The OTLP/HTTP span exporter for the configured protocol. Protobuf is the JSON exporter's own
 * transport (retries, timeouts, the `OTEL_EXPORTER_OTLP_*` settings it reads) with the
 * transformer's protobuf serialiser in place of the JSON one: the same wiring as the published
 * `@opentelemetry/exporter-trace-otlp-proto`, from the two packages the JSON exporter already
 * brings.
 */
export function otlpTraceExporter(config: TracingConfig): SpanExporter {
  const options = { url: config.url, headers: { ...config.headers } };
  if (config.protocol === 'http/json') return new OTLPTraceExporter(options);
  return new OTLPExporterBase<ReadableSpan[]>(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions(options, 'TRACES', 'v1/traces', {
        'Content-Type': 'application/x-protobuf',
      }),
      ProtobufTraceSerializer,
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined,
    ),
  );
}
