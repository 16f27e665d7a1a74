import type { Reader } from './variable.ts';
import {
  OTEL_BSP_SCHEDULE_DELAY,
  OTEL_EXPORTER_OTLP_ENDPOINT,
  OTEL_EXPORTER_OTLP_HEADERS,
  OTEL_EXPORTER_OTLP_PROTOCOL,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
  OTEL_RESOURCE_ATTRIBUTES,
  OTEL_SDK_DISABLED,
  OTEL_SERVICE_NAME,
  OTEL_TRACES_EXPORTER,
  OTEL_TRACES_SAMPLER,
  OTEL_TRACES_SAMPLER_ARG,
} from './variables/tracing.ts';

export type OtlpProtocol = NonNullable<ReturnType<typeof OTEL_EXPORTER_OTLP_PROTOCOL.parse>>;
export type TraceSampler = ReturnType<typeof OTEL_TRACES_SAMPLER.parse>;

/** The OTLP/HTTP exporter's settings; each field's variable (variables/tracing.ts) says more. */
export interface TracingConfig {
  /** Where spans are POSTed: the traces endpoint as is, or the base endpoint + `/v1/traces`. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: TraceSampler;
  readonly samplerRatio: number;
  readonly exportDelayMs: number;
  readonly protocol: OtlpProtocol;
}

/**
 * Tracing as the OpenTelemetry specification's variables set it: undefined without an endpoint,
 * with `OTEL_SDK_DISABLED=true` or with `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingConfig(read: Reader): TracingConfig | undefined {
  const base = read(OTEL_EXPORTER_OTLP_ENDPOINT);
  const traces = read(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (read(OTEL_SDK_DISABLED) || read(OTEL_TRACES_EXPORTER) === 'none') return undefined;
  if (base === undefined && traces === undefined) return undefined;
  return Object.freeze({
    url: traces ?? `${(base as string).replace(/\/+$/, '')}/v1/traces`,
    // Each signal-specific variable, when set, replaces the general one, which is then unread.
    headers: Object.freeze({
      ...read(OTEL_EXPORTER_OTLP_HEADERS),
      ...read(OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    }),
    serviceName: read(OTEL_SERVICE_NAME),
    resourceAttributes: read(OTEL_RESOURCE_ATTRIBUTES),
    sampler: read(OTEL_TRACES_SAMPLER),
    samplerRatio: read(OTEL_TRACES_SAMPLER_ARG),
    exportDelayMs: read(OTEL_BSP_SCHEDULE_DELAY),
    protocol: read(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? read(OTEL_EXPORTER_OTLP_PROTOCOL),
  });
}
