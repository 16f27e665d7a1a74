import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config/config.ts';
import { CallerSampler, DrawnRatioSampler } from './caller-sampler.ts';
import { otlpTraceExporter } from './otlp-exporter.ts';
import { SampledContextManager } from './sampled-context.ts';
import { useTracer } from './tracing.ts';

export interface RunningTracing {
  /** Sends the spans still buffered, then stops the SDK. */
  close(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK for this process: W3C trace context, the configured sampler,
 * spans batched to the OTLP/HTTP endpoint in JSON or protobuf. Imported only when an endpoint is configured, so a
 * process without one never loads the SDK.
 */
export function startTracing(config: TracingConfig): RunningTracing {
  const contextManager = new SampledContextManager();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      [ATTR_SERVICE_NAME]: config.serviceName,
    }),
    sampler: sampler(config),
    spanProcessors: [
      contextManager.openSpans,
      new BatchSpanProcessor(otlpTraceExporter(config), {
        scheduledDelayMillis: config.exportDelayMs,
      }),
    ],
  });
  // Registers the context manager and the propagator globally: the active span follows a
  // sampled request through awaits into the storage adapters.
  provider.register({ contextManager, propagator: new W3CTraceContextPropagator() });
  useTracer(provider.getTracer('cairn'), () => contextManager.recording());
  return {
    async close() {
      useTracer(undefined);
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

/**
 * The sampler `OTEL_TRACES_SAMPLER` names, behind one that lets a caller's `traceparent` decide
 * only once the caller showed a valid credential (caller-sampler.ts). An anonymous caller's
 * request is sampled as a request without parent would be: always, never, or by the ratio, on a
 * draw of its own.
 */
function sampler(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.samplerRatio);
  const configured: Record<TracingConfig['sampler'], () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    parentbased_traceidratio: () => new ParentBasedSampler({ root: ratio() }),
  };
  const untrusted: Record<TracingConfig['sampler'], () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new DrawnRatioSampler(config.samplerRatio),
    parentbased_always_on: () => new AlwaysOnSampler(),
    parentbased_always_off: () => new AlwaysOffSampler(),
    parentbased_traceidratio: () => new DrawnRatioSampler(config.samplerRatio),
  };
  return new CallerSampler(configured[config.sampler](), untrusted[config.sampler]());
}
