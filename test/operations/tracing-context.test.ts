import { executionAsyncId } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { SampledContextManager } from '../../libs/tracing/sampled-context.ts';

/**
 * Whether Node runs an async hook on promises: with none, a continuation after `await` runs with
 * no async id of its own (0); with one (an entered AsyncLocalStorage), each promise has an id.
 */
async function promisesHooked(): Promise<boolean> {
  await null;
  return executionAsyncId() !== 0;
}

function traced() {
  const manager = new SampledContextManager();
  const tracer = new BasicTracerProvider({ spanProcessors: [manager.openSpans] }).getTracer('t');
  const start = (name: string, parent = ROOT_CONTEXT) => tracer.startSpan(name, {}, parent);
  const activeSpan = () => trace.getSpan(manager.active());
  const under = <T>(span: Span, work: () => Promise<T>) =>
    manager.with(trace.setSpan(ROOT_CONTEXT, span), work);
  return { manager, start, activeSpan, under };
}

describe('the context of sampled spans', () => {
  it('follows a sampled span through awaits and timers, and unhooks promises once none is open', async () => {
    const { manager, start, activeSpan, under } = traced();
    expect(await promisesHooked()).toBe(false);

    const request = start('request');
    let inner: unknown;
    let hookedInside = false;
    await under(request, async () => {
      await sleep(2);
      const statement = start('statement', trace.setSpan(ROOT_CONTEXT, request));
      statement.end();
      // A child ending is not the last open span: the request's context is still there.
      await Promise.resolve();
      inner = activeSpan();
      hookedInside = await promisesHooked();
    });
    expect(inner).toBe(request);
    // Node 20 and 22 hook promises while the storage is on; Node 24's context frames never do.
    expect(hookedInside).toBe(manager.unhooks);

    request.end();
    expect(await promisesHooked()).toBe(false);
    expect(activeSpan()).toBeUndefined();
  });

  it('keeps a second trace’s context when the first one ends', async () => {
    const { start, activeSpan, under } = traced();
    const first = start('first');
    const second = start('second');
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen = under(second, async () => {
      await held;
      await sleep(1);
      return activeSpan();
    });
    await under(first, async () => {
      await sleep(1);
    });
    first.end();
    release();
    expect(await seen).toBe(second);
    second.end();
    expect(await promisesHooked()).toBe(false);
  });

  it('holds a context entered with no recording span open for the synchronous call only', async () => {
    const { manager, start } = traced();
    const ended = start('ended');
    ended.end();
    const unsampled = trace.wrapSpanContext(ended.spanContext());
    const context = trace.setSpan(ROOT_CONTEXT, unsampled);
    let inside: unknown;
    const later = manager.with(context, async () => {
      inside = trace.getSpan(manager.active());
      await sleep(1);
      return trace.getSpan(manager.active());
    });
    expect(inside).toBe(unsampled);
    expect(await promisesHooked()).toBe(false);
    // Where nothing is switched off (Node 24), the context follows its awaits as usual.
    expect(await later).toBe(manager.unhooks ? undefined : unsampled);
  });
});
