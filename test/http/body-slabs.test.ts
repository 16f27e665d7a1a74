import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodySlabs } from '../../libs/http/body-slabs.ts';
import { clientError } from '../../libs/http/client-errors.ts';
import { readJsonBody } from '../../libs/http/json-body.ts';
import { waitFor } from '../support/engines.ts';

describe('body slabs', () => {
  it('lends each buffer once, up to the count, and takes it back once', () => {
    const slabs = new BodySlabs({ bytes: 1024, count: 2 });
    expect(slabs.reserve(2048)).toBeUndefined();
    const first = slabs.reserve(1000);
    const second = slabs.reserve(10);
    expect(first?.bytes.length).toBe(1000);
    expect(second?.bytes.buffer).not.toBe(first?.bytes.buffer);
    expect(slabs.reserve(10)).toBeUndefined();
    first?.bytes.fill(7);
    first?.release();
    first?.release();
    const again = slabs.reserve(5);
    expect(again?.bytes.buffer).toBe(first?.bytes.buffer);
    expect(again?.bytes.length).toBe(5);
    // Released twice, but lent out only once more.
    expect(slabs.reserve(5)).toBeUndefined();
  });
});

describe('reading large bodies into slabs', () => {
  const slabs = new BodySlabs({ bytes: 1_048_576, count: 1 });
  let url = '';
  let port = 0;
  let server: ReturnType<express.Express['listen']>;
  let largeBodies = 0;

  beforeAll(async () => {
    const app = express();
    // Outside the router: this handler owns what it read and gives it back itself.
    app.post('/body', async (req: Request, res: Response) => {
      const { bytes, release } = await readJsonBody(req, res, slabs, {
        onLargeBody: () => largeBodies++,
      });
      const shared = bytes?.buffer instanceof SharedArrayBuffer;
      const text = bytes ? new TextDecoder().decode(bytes) : '';
      release();
      res.json({ shared, length: text.length, head: text.slice(0, 12), tail: text.slice(-12) });
    });
    app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const problem = clientError(error);
      res.status(problem?.status ?? 500).json({ detail: problem?.detail ?? String(error) });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = async (body: string | Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/body`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const padded = (name: string, size: number) => {
    const head = `{"name":"${name}"`;
    return `${head}${' '.repeat(size - head.length - 1)}}`;
  };

  it('reads a large plain body into shared memory, exactly its own bytes', async () => {
    const long = await post(padded('long', 600_000));
    expect(long).toEqual({
      status: 200,
      body: { shared: true, length: 600_000, head: '{"name":"lon', tail: '           }' },
    });
    // The same slab again, shorter: nothing of the longer body shows through.
    const short = await post(padded('short', 70_000));
    expect(short.body).toEqual({
      shared: true,
      length: 70_000,
      head: '{"name":"sho',
      tail: '           }',
    });
  });

  it('reads small, compressed and oversized bodies as before', async () => {
    expect((await post(padded('small', 1_000))).body.shared).toBe(false);
    const zipped = await post(gzipSync(padded('zipped', 200_000)), { 'content-encoding': 'gzip' });
    expect(zipped.body).toMatchObject({ shared: false, length: 200_000 });
    expect((await post(padded('huge', 1_100_000))).status).toBe(413);
  });

  it('tells the onLargeBody hook of each large body read, slab or not, never of a small one', async () => {
    largeBodies = 0;
    for (let i = 0; i < 3; i++) await post(padded('small', 1_000));
    expect(largeBodies).toBe(0);
    await post(padded('large', 300_000));
    await post(gzipSync(padded('zipped', 200_000)), { 'content-encoding': 'gzip' });
    expect(largeBodies).toBe(2);
  });

  it('gives the slab back when the client hangs up halfway through the body', async () => {
    for (let round = 0; round < 3; round++) {
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `Content-Length: 200000\r\n\r\n{"name":"cut"${' '.repeat(50_000)}`,
      );
      // The server has taken the only slab once the first bytes arrived.
      await waitFor(async () => {
        const probe = slabs.reserve(1);
        probe?.release();
        return probe === undefined || undefined;
      });
      socket.destroy();
      await waitFor(async () => {
        const probe = slabs.reserve(1);
        probe?.release();
        return probe !== undefined || undefined;
      });
    }
    expect((await post(padded('after', 100_000))).body.shared).toBe(true);
  });
});
