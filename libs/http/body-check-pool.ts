import os from 'node:os';
import { type BodyOutcome, checkBody, type RawBody } from './body-check.ts';
import type { BodyJob } from './body-check.worker.ts';
import { BodySlabs, type Slab, type SlabSource } from './body-slabs.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';
import type { JsonSchema } from './json-schema.ts';
import type { Route } from './route.ts';
import { WorkerPool } from './worker-pool.ts';

export interface BodyCheckOptions {
  /** Bodies of more bytes than this are decoded, parsed and validated on a worker thread. @defaultValue 65536 */
  offThreadAbove: number;
  /** Worker threads at most. @defaultValue one less than the cores, within 1–4 */
  threads: number;
  /** Longest a large body may wait for its check, queue included, before a 503. @defaultValue 10000 */
  timeoutMs: number;
  /** Large bodies that may wait for a thread; more are refused with a 503 at once. @defaultValue 64 */
  maxQueued: number;
  /** The worker module (tests give one that stalls or crashes). */
  entry: URL;
  /** Told why a worker thread died. */
  onError?: (error: unknown) => void;
}

const DEFAULTS: BodyCheckOptions = {
  offThreadAbove: 65_536,
  threads: Math.max(1, Math.min(4, os.availableParallelism() - 1)),
  timeoutMs: 10_000,
  maxQueued: 64,
  entry: new URL('./body-check.worker.ts', import.meta.url),
};

/**
 * Parsing and validating a JSON body, wherever it is cheapest to do. JSON.parse of a megabyte
 * holds the event loop for tens of milliseconds; a few clients sending such bodies within their
 * rate limit would stall every other request. So bodies above a size are parsed and validated
 * on a worker thread, and only the outcome crosses back: the issues of a 422 (at most 100) or
 * the checked value, which is small because every schema bounds what it accepts. Small bodies
 * are checked in place, where a thread hop would cost more than it saves.
 */
export class BodyChecks implements SlabSource {
  private readonly options: BodyCheckOptions;
  private readonly schemas = new Map<JsonSchema, number>();
  private readonly pool: WorkerPool<BodyJob, BodyOutcome>;
  private readonly slabs: BodySlabs;

  constructor(routes: readonly Route[], options: Partial<BodyCheckOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
    for (const { body } of routes) {
      if (body && !this.schemas.has(body)) this.schemas.set(body, this.schemas.size);
    }
    this.pool = new WorkerPool({
      entry: this.options.entry,
      data: { schemas: [...this.schemas.keys()] },
      threads: this.options.threads,
      timeoutMs: this.options.timeoutMs,
      maxQueued: this.options.maxQueued,
      onError: this.options.onError,
    });
    // A slab per thread and per body read while the threads are busy; past that, bodies are
    // read into memory of their own.
    this.slabs = new BodySlabs({ bytes: BODY_LIMIT_BYTES, count: this.options.threads * 2 + 2 });
  }

  reserve(length: number): Slab | undefined {
    return this.slabs.reserve(length);
  }

  /** The outcome for a body as read, against the route's schema. */
  async check(route: Route, body: RawBody): Promise<BodyOutcome> {
    const schema = route.body ? (this.schemas.get(route.body) ?? -1) : -1;
    const { bytes } = body;
    if (
      bytes === undefined ||
      bytes.byteLength <= this.options.offThreadAbove ||
      (route.body && schema < 0)
    ) {
      return checkBody(body, route.body);
    }
    // A body in a slab is shared memory the worker reads in place; other bytes move to the
    // worker rather than being copied when they own their memory, as a body read whole does.
    if (bytes.buffer instanceof SharedArrayBuffer) {
      return this.pool.run({ body: { bytes, charset: body.charset }, schema });
    }
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const moved = owned ? bytes : new Uint8Array(bytes);
    return this.pool.run({ body: { bytes: moved, charset: body.charset }, schema }, [
      moved.buffer as ArrayBuffer,
    ]);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
