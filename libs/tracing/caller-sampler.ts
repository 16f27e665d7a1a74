import {
  type Attributes,
  type Context,
  createContextKey,
  isSpanContextValid,
  type Link,
  type SpanKind,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { type Sampler, SamplingDecision, type SamplingResult } from '@opentelemetry/sdk-trace-node';

/** Set on the context a request span starts in once its caller showed a valid credential. */
const TRUSTED_PARENT = createContextKey('cairn.trusted_parent');

/** `parent` (a caller's `traceparent`), vouched for: its caller holds a valid credential. */
export function trustedParent(parent: Context): Context {
  return parent.setValue(TRUSTED_PARENT, true);
}

/**
 * The configured sampler, except for a span whose parent came from outside (a `traceparent`)
 * that nobody vouched for (`trustedParent`): that span is decided by `untrusted`, as a span
 * without parent would be, while it keeps the caller's trace id. Neither the sampled flag nor
 * the trace id of an anonymous caller decides anything: `traceidratio` hashes the trace id, so
 * a caller choosing it could otherwise pick ids that are always sampled. The service's own
 * spans follow their request's decision, as a `parentbased_*` sampler has them do: `traceidratio`
 * alone would decide them by the caller's trace id again, and leave out the children of a
 * request the draw kept.
 */
export class CallerSampler implements Sampler {
  private readonly configured: Sampler;
  private readonly untrusted: Sampler;

  constructor(configured: Sampler, untrusted: Sampler) {
    this.configured = configured;
    this.untrusted = untrusted;
  }

  shouldSample(
    context: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const found = trace.getSpanContext(context);
    const parent = found && isSpanContextValid(found) ? found : undefined;
    if (parent !== undefined && !parent.isRemote) {
      const sampled = (parent.traceFlags & TraceFlags.SAMPLED) !== 0;
      return {
        decision: sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
      };
    }
    const vouched = parent === undefined || context.getValue(TRUSTED_PARENT) === true;
    const sampler = vouched ? this.configured : this.untrusted;
    return sampler.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `CallerSampler{configured=${this.configured}, untrusted=${this.untrusted}}`;
  }
}

/** Samples a share of spans by a draw of its own, whatever their trace id says. */
export class DrawnRatioSampler implements Sampler {
  private readonly ratio: number;

  constructor(ratio: number) {
    this.ratio = ratio;
  }

  shouldSample(): SamplingResult {
    return {
      decision:
        Math.random() < this.ratio
          ? SamplingDecision.RECORD_AND_SAMPLED
          : SamplingDecision.NOT_RECORD,
    };
  }

  toString(): string {
    return `DrawnRatioSampler{${this.ratio}}`;
  }
}
