import type { Area, Variable } from '../variable.ts';
import { choice, fraction, integer, text, url } from '../variable-kinds.ts';
import { pairs } from '../variable-lists.ts';

export const OTEL_EXPORTER_OTLP_ENDPOINT = url({
  name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  protocols: ['http:', 'https:'],
  shown: 'unset → no tracing',
  doc: 'OTLP/HTTP base URL (`http://collector:4318`); spans go to its `/v1/traces`',
});

export const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = url({
  name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  protocols: ['http:', 'https:'],
  doc: 'full URL for spans, used as it is (wins over the base URL)',
});

export const OTEL_EXPORTER_OTLP_HEADERS = pairs({
  name: 'OTEL_EXPORTER_OTLP_HEADERS',
  doc: 'headers sent with every export: `name=value` pairs, comma-separated, values percent-encoded (`authorization=Bearer%20…`)',
});

export const OTEL_EXPORTER_OTLP_TRACES_HEADERS = pairs({
  name: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  replaces: OTEL_EXPORTER_OTLP_HEADERS,
  doc: 'the same for spans only (wins over the one above)',
});

// Cairn speaks OTLP over HTTP only; `grpc` would need a transport it does not ship.
const PROTOCOLS = ['http/json', 'http/protobuf'] as const;

export const OTEL_EXPORTER_OTLP_PROTOCOL = choice({
  name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
  values: PROTOCOLS,
  default: 'http/json',
  doc: 'the body of each export: `http/json` or `http/protobuf` (both OTLP/HTTP on one path); `grpc` and anything else refused',
});

export const OTEL_EXPORTER_OTLP_TRACES_PROTOCOL = choice({
  name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  values: PROTOCOLS,
  replaces: OTEL_EXPORTER_OTLP_PROTOCOL,
  doc: 'the same for spans only',
});

export const OTEL_TRACES_SAMPLER = choice({
  name: 'OTEL_TRACES_SAMPLER',
  values: [
    'always_on',
    'always_off',
    'traceidratio',
    'parentbased_always_on',
    'parentbased_always_off',
    'parentbased_traceidratio',
  ],
  oneOf: true,
  default: 'parentbased_always_on',
  doc: '`always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off`, `parentbased_traceidratio`',
});

export const OTEL_TRACES_SAMPLER_ARG = fraction({
  name: 'OTEL_TRACES_SAMPLER_ARG',
  default: 1,
  doc: "the ratio samplers' share of traces, 0 to 1 (`0.01` = 1 %)",
});

export const OTEL_SERVICE_NAME = text({
  name: 'OTEL_SERVICE_NAME',
  default: 'cairn',
  doc: '`service.name` of every span',
});

export const OTEL_RESOURCE_ATTRIBUTES = pairs({
  name: 'OTEL_RESOURCE_ATTRIBUTES',
  doc: 'more resource attributes, `key=value` pairs (`deployment.environment=prod`)',
});

export const OTEL_BSP_SCHEDULE_DELAY = integer({
  name: 'OTEL_BSP_SCHEDULE_DELAY',
  default: 5_000,
  min: 1,
  max: 600_000,
  doc: 'milliseconds finished spans gather before they are sent',
});

// The specification's boolean: `true` in any case is true, anything else false, nothing refused.
export const OTEL_SDK_DISABLED: Variable<boolean> = {
  name: 'OTEL_SDK_DISABLED',
  default: false,
  shown: '`false`',
  doc: '`true` turns tracing off even with an endpoint set',
  parse: (raw) => raw.toLowerCase() === 'true',
};

export const OTEL_TRACES_EXPORTER = choice({
  name: 'OTEL_TRACES_EXPORTER',
  values: ['otlp', 'none'],
  default: 'otlp',
  doc: '`none` turns tracing off even with an endpoint set',
});

export const TRACING: Area = {
  title: 'Tracing',
  variables: [
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_EXPORTER_OTLP_HEADERS,
    OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    OTEL_TRACES_SAMPLER,
    OTEL_TRACES_SAMPLER_ARG,
    OTEL_SERVICE_NAME,
    OTEL_RESOURCE_ATTRIBUTES,
    OTEL_BSP_SCHEDULE_DELAY,
    OTEL_SDK_DISABLED,
    OTEL_TRACES_EXPORTER,
  ],
};
