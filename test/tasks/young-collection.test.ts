import type { AddressInfo } from 'node:net';
import { constants, type NodeGCPerformanceDetail, PerformanceObserver } from 'node:perf_hooks';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRuntimeTuning } from '../../apps/server/runtime-tuning.ts';
import { BodySlabs } from '../../libs/http/body-slabs.ts';
import { readJsonBody } from '../../libs/http/json-body.ts';
import { tricksToApply } from '../../libs/runtime/index.ts';
import { waitFor } from '../support/engines.ts';

/** What `gc` is in a context made now: a fresh `vm` context, and a fresh worker thread. */
async function gcInNewContexts(): Promise<{ vm: string; worker: string }> {
  const worker = new Worker(
    "require('node:worker_threads').parentPort.postMessage(typeof globalThis.gc)",
    { eval: true },
  );
  try {
    const inWorker = await new Promise<string>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return { vm: vm.runInNewContext('typeof gc') as string, worker: inWorker };
  } finally {
    await worker.terminate();
  }
}

/**
 * Young-generation collection after large bodies (libs/runtime/young-collection.ts), off and
 * then on in one process: `--expose-gc` cannot be taken back once contexts have been made with
 * it, so the order of these tests is the point. Each file runs in a process of its own.
 */
describe('young-generation collection after large bodies', () => {
  const slabs = new BodySlabs({ bytes: 1_048_576, count: 1 });
  let onLargeBody: (() => void) | undefined;
  let url = '';
  let server: ReturnType<express.Express['listen']>;
  const forcedMinor: string[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { kind, flags } = (entry as unknown as { detail: NodeGCPerformanceDetail }).detail;
      const forced = (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR && forced) forcedMinor.push('minor');
    }
  });

  beforeAll(async () => {
    observer.observe({ entryTypes: ['gc'] });
    const app = express();
    // The kernel's reader with whatever hook runtime tuning gave (none while switched off).
    app.post('/body', async (req: Request, res: Response) => {
      const { bytes, release } = await readJsonBody(req, res, slabs, {
        onLargeBody: () => onLargeBody?.(),
      });
      release();
      res.json({ length: bytes?.length ?? 0 });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    observer.disconnect();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = async (body: string | Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/body`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  };
  const padded = (name: string, size: number) => {
    const head = `{"name":"${name}"`;
    return `${head}${' '.repeat(size - head.length - 1)}}`;
  };
  // GC entries reach the observer a little after the collection.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('applies where measured to help unless switched: every Node version by default', () => {
    const auto = { youngCollection: 'auto', expressMessages: 'off' } as const;
    expect(tricksToApply(auto, 20).youngCollection).toBe(true);
    expect(tricksToApply(auto, 22).youngCollection).toBe(true);
    expect(tricksToApply(auto, 24).youngCollection).toBe(true);
    expect(tricksToApply({ ...auto, youngCollection: 'on' }, 24).youngCollection).toBe(true);
    expect(tricksToApply({ ...auto, youngCollection: 'off' }, 24).youngCollection).toBe(false);
    expect(tricksToApply({ ...auto, youngCollection: 'off' }, 20).youngCollection).toBe(false);
  });

  it('switched off: exposes no gc anywhere and collects nothing after large bodies', async () => {
    expect(await gcInNewContexts()).toEqual({ vm: 'undefined', worker: 'undefined' });
    const tuning = applyRuntimeTuning({ youngCollection: 'off', expressMessages: 'off' });
    expect(tuning.onLargeBody).toBeUndefined();
    expect(tuning.applied).toEqual([]);
    onLargeBody = tuning.onLargeBody;
    for (let i = 0; i < 3; i++) await post(padded('large', 300_000));
    await post(gzipSync(padded('zipped', 200_000)), { 'content-encoding': 'gzip' });
    // The flag is still unset, so nothing in the process could have forced a collection.
    expect(await gcInNewContexts()).toEqual({ vm: 'undefined', worker: 'undefined' });
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
  });

  it('switched on: collects the young generation after each large body, never after a small one', async () => {
    const tuning = applyRuntimeTuning({ youngCollection: 'on', expressMessages: 'off' });
    expect(tuning.applied).toEqual(['young-collection']);
    onLargeBody = tuning.onLargeBody;
    expect(onLargeBody).toBeTypeOf('function');
    // A first collection with no body at all: GC entries arrive in order, so once it is here
    // every collection of the switched-off test would have been too, and there were none.
    onLargeBody?.();
    await waitFor(async () => forcedMinor.length > 0 || undefined);
    expect(forcedMinor).toEqual(['minor']);
    forcedMinor.length = 0;
    for (let i = 0; i < 5; i++) await post(padded('small', 1_000));
    await settle();
    expect(forcedMinor).toHaveLength(0);
    // One at a time, so no two bodies share a turn of the event loop: one collection each,
    // whether the body went into a slab or was read as before (compressed).
    for (let i = 0; i < 3; i++) await post(padded('large', 300_000));
    await post(gzipSync(padded('zipped', 200_000)), { 'content-encoding': 'gzip' });
    await waitFor(async () => forcedMinor.length >= 4 || undefined);
    await settle();
    expect(forcedMinor).toHaveLength(4);
  });

  it('switched on: every context made afterwards has a global gc, worker threads included', async () => {
    // What the trick's doc comment owns up to: the flag is process-wide. The main context,
    // made before it, is the only one without.
    expect(await gcInNewContexts()).toEqual({ vm: 'function', worker: 'function' });
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
  });
});
