import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/**
 * The seams' way into OpenTelemetry. Everything here asks `tracer` first: while no SDK runs
 * (no OTLP endpoint configured) it is undefined and each helper is a branch and a call, with no
 * span, context or closure made, so tracing that is off costs nothing measurable.
 */
let tracer: Tracer | undefined;
/**
 * Whether any recording span is open in the process. While none is, nothing active can be
 * sampled, so the checks below answer without asking the context API: at 1 % sampling that is
 * most of the time, and the checks run for every statement and log line.
 */
let anyRecording: () => boolean = () => true;

/** Set by tracing-sdk.ts once the SDK is registered, cleared when it shuts down. */
export function useTracer(next: Tracer | undefined, recording: () => boolean = () => true): void {
  tracer = next;
  anyRecording = recording;
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/**
 * Runs `work` inside a child span of the active one (`root`: a new trace, for work that belongs
 * to no request, like a projector batch); a throw marks the span as an error.
 */
export function inSpan<T>(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; root?: boolean },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  // Only under a sampled span, or as a new trace: an unsampled request makes no child spans.
  if (!tracer || !(options.root || recordingNow())) return work(undefined);
  const parent = options.root ? ROOT_CONTEXT : context.active();
  const spanOptions = { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes };
  const span = tracer.startSpan(name, spanOptions, parent);
  if (!span.isRecording()) {
    // A new trace the sampler declined enters no context (see withSpan), unless it was started
    // under a sampled one (a batch woken by a traced write), whose spans it must not join.
    return context.active() === ROOT_CONTEXT
      ? work(undefined)
      : context.with(ROOT_CONTEXT, () => work(undefined));
  }
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span started now under `parent` (the active context unless given), ended by the caller. */
export function startSpan(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; links?: Link[]; startTime?: number },
  parent: Context = context.active(),
): Span | undefined {
  return tracer?.startSpan(name, options, parent);
}

/**
 * Runs `work` with `span` as the active span, so the spans and log lines under it are its
 * children. An unsampled span is not made active: nothing under it would be recorded, and
 * entering a context on every request is most of what tracing at a low sampling rate costs.
 */
export function withSpan<T>(span: Span | undefined, work: () => T): T {
  if (!span?.isRecording()) return work();
  return context.with(trace.setSpan(context.active(), span), work);
}

export function failSpan(span: Span | undefined, error: unknown): void {
  if (!span) return;
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.name : 'error',
  });
}

/** The active span's ids when it is sampled (a trace a backend will have), for logs and problems. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!tracer || !anyRecording()) return undefined;
  return sampledIds(trace.getActiveSpan());
}

export function sampledIds(
  span: Span | undefined,
): { trace_id: string; span_id: string } | undefined {
  const ids = span?.spanContext();
  if (!ids || !isSpanContextValid(ids) || !(ids.traceFlags & TraceFlags.SAMPLED)) return undefined;
  return { trace_id: ids.traceId, span_id: ids.spanId };
}

/**
 * The active span as a W3C `traceparent`, kept with an outbox fact so the projector's batch
 * can link to the write that made it; null when nothing is traced or sampled.
 */
export function activeTraceparent(): string | null {
  const ids = activeTraceIds();
  return ids ? `00-${ids.trace_id}-${ids.span_id}-01` : null;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Links to the writes whose facts a batch carries: one per distinct stored `traceparent`. */
export function linksTo(traceparents: Iterable<string | null | undefined>): Link[] {
  if (!tracer) return [];
  const links: Link[] = [];
  const seen = new Set<string>();
  for (const text of traceparents) {
    if (!text || seen.has(text)) continue;
    seen.add(text);
    const match = TRACEPARENT.exec(text);
    if (!match) continue;
    links.push({
      context: {
        traceId: match[1] as string,
        spanId: match[2] as string,
        traceFlags: Number.parseInt(match[3] as string, 16),
        isRemote: true,
      },
    });
  }
  return links;
}

export { SpanKind };

/**
 * A span for work that has already finished, `durationMs` long and ending now, under the
 * active span: a statement timed by its driver (Kysely's log hook). None when nothing around it
 * is sampled, so background polling makes no orphan spans.
 */
export function recordFinished(
  name: string,
  durationMs: number,
  attributes: Attributes,
  error?: unknown,
): void {
  if (!tracer || !recordingNow()) return;
  const end = Date.now();
  const span = tracer.startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes,
    startTime: end - durationMs,
  });
  if (error !== undefined) failSpan(span, error);
  span.end(end);
}

/** Whether a span made now would be recorded: the seams skip their attribute work otherwise. */
export function recordingNow(): boolean {
  return tracer !== undefined && anyRecording() && trace.getActiveSpan()?.isRecording() === true;
}
