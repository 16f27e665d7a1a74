import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';

/**
 * The active context for the SDK, kept in an AsyncLocalStorage that is switched on only while a
 * sampled span is open. On Node 20 an AsyncLocalStorage that has once been entered installs an
 * async hook that runs on every promise and timer of the process, sampled or not, for good;
 * at 1 % sampling that hook was most of what tracing cost a cheap request. Here it is switched
 * off again as soon as the last recording span ends, so the unsampled requests served between
 * two sampled ones pay no hook at all.
 *
 * The spans are counted by `openSpans`, the span processor registered beside this manager: the
 * SDK calls it for recording spans only. Work of a sampled trace still running after its last
 * span ended (a log line written after the answer) sees no active context, as if unsampled.
 * Seams enter a context only for a recording span (tracing.ts); a context entered while no
 * recording span is open holds for the synchronous call only.
 *
 * Node 24 keeps an AsyncLocalStorage in async context frames instead, with no async hook at
 * all, so there is nothing to switch off: `unhooks` is false there and the storage behaves as
 * the SDK's own (a context follows its awaits whether or not a span is open).
 */
export class SampledContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  private open = 0;
  /** Whether this Node's AsyncLocalStorage hooks promises, so switching it off pays. */
  readonly unhooks = Number(process.versions.node.split('.')[0]) < 24;

  /** Counts the recording spans, to switch the storage off when none is left. */
  readonly openSpans: SpanProcessor = {
    onStart: (_span: Span) => {
      this.open++;
    },
    onEnd: (_span: ReadableSpan) => {
      this.open--;
      if (this.open <= 0) {
        this.open = 0;
        // Exits every context entered so far and removes the async hook until the next `with`.
        if (this.unhooks) this.storage.disable();
      }
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };

  /** Whether a recording span is open anywhere in the process (none: nothing is sampled now). */
  recording(): boolean {
    return this.open > 0;
  }

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const callback = thisArg == null ? fn : fn.bind(thisArg);
    const result = this.storage.run(context, callback, ...args);
    // Entered with no recording span open (the span processor's export, every few seconds):
    // nothing under it is sampled, so the hook is not left on for it.
    if (this.open === 0 && this.unhooks) this.storage.disable();
    return result;
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => target.apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
