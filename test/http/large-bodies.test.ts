import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_METRICS, queryBody } from '../../libs/analytics/parse/query.schemas.ts';
import { checkBody } from '../../libs/http/body-check.ts';
import { ValidationError } from '../../libs/http/errors.ts';
import { validate } from '../../libs/http/validation.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';

/** Bodies past the off-thread threshold (64 KiB) are parsed and validated on a worker thread. */
describe('large request bodies', () => {
  const cairn = useCairn({ rateLimits: unlimited(), businesses: ['lb'] });
  const padding = ' '.repeat(300_000);

  const send = async (
    path: string,
    body: Buffer | string,
    headers: Record<string, string> = {},
  ): Promise<HttpResult> =>
    http(cairn.url, 'POST', path, {
      headers: { ...cairn.auth, 'content-type': 'application/json', ...headers },
      raw: body,
    });
  const expectProblem = (res: HttpResult, status: number) => {
    expect(res.status, res.text).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(status);
  };

  it('answers a megabyte of unknown members with the exact 422 and its 100 issues', async () => {
    const members = Array.from({ length: 60_000 }, (_, i) => `"x${i}":1`).join(',');
    const text = `{"business":"lb","name":"many",${members}}`;
    expect(text.length).toBeGreaterThan(600_000);
    const res = await send('/api/v1/tasks', text);
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.detail).toHaveLength(100);
    expect(res.body.detail[0]).toEqual({
      loc: ['body', 'x0'],
      msg: 'Extra inputs are not permitted',
      type: 'extra_forbidden',
    });
    expect(res.body.detail[99].loc).toEqual(['body', 'x99']);
    const createTask = cairn.routes.find((route) => route.operationId === 'createTask')?.body;
    const inPlace = checkBody({ bytes: Buffer.from(text), charset: 'utf-8' }, createTask);
    expect(res.body).toEqual({ detail: inPlace.kind === 'invalid' ? inPlace.issues : [] });
  });

  it('answers a megabyte of bad metrics with the exact 422 of the in-place check', async () => {
    const text = JSON.stringify({ metrics: Array.from({ length: 100_000 }, (_, i) => `m${i}`) });
    expect(text.length).toBeGreaterThan(800_000);
    const res = await send('/api/v1/query', text);
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.detail[0]).toEqual({
      loc: ['body', 'metrics'],
      msg: 'List should have at most 20 items',
      type: 'too_long',
    });
    expect(res.body.detail[1]).toMatchObject({ loc: ['body', 'metrics', 0], type: 'enum' });
    const inPlace = checkBody({ bytes: Buffer.from(text), charset: 'utf-8' }, queryBody);
    expect(inPlace.kind).toBe('invalid');
    expect(res.body).toEqual({ detail: inPlace.kind === 'invalid' ? inPlace.issues : [] });
  });

  it('looks at no more of 100,000 bad metrics than its 422 can list', () => {
    const metrics = Array.from({ length: 100_000 }, (_, i) => `m${i}`);
    const issuesOf = (body: unknown) => {
      try {
        validate(queryBody, body, 'body');
      } catch (error) {
        if (error instanceof ValidationError) return error.issues;
        throw error;
      }
      return [];
    };
    // Every item the validation reads, counted: a walk of the whole list reads 100,000.
    let reads = 0;
    const counted = new Proxy(metrics, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const issues = issuesOf({ metrics: counted });
    expect(reads).toBeLessThanOrEqual(2 * (MAX_METRICS + 1));
    // The 422 as before: too long, then each of the first 21 items by name.
    expect(issues).toEqual(issuesOf({ metrics }));
    expect(issues).toHaveLength(MAX_METRICS + 2);
    expect(issues[0]).toEqual({
      loc: ['body', 'metrics'],
      msg: `List should have at most ${MAX_METRICS} items`,
      type: 'too_long',
    });
    expect(issues.at(-1)).toMatchObject({ loc: ['body', 'metrics', MAX_METRICS], type: 'enum' });
  });

  it('accepts a valid body padded past the threshold, plain or gzipped', async () => {
    const task = `{"business":"lb","name":"padded"${padding}}`;
    const created = await send('/api/v1/tasks', task);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'padded', business: 'lb', status: 'open' });
    const zipped = await send(
      '/api/v1/tasks',
      gzipSync(`{"business":"lb","name":"zipped"${padding}}`),
      { 'content-encoding': 'gzip' },
    );
    expect(zipped.status, zipped.text).toBe(201);
    expect(zipped.body.data.name).toBe('zipped');
    const query = await send(
      '/api/v1/query',
      `{"metrics":["tasks_created"],"period":"all_time"${padding}}`,
    );
    expect(query.status, query.text).toBe(200);
    expect(query.body.metadata).toBeDefined();
  });

  it("lists a large body's issues exactly as the in-place check does", async () => {
    const res = await send('/api/v1/tasks', `{"business":"lb","name":"","extra":1${padding}}`);
    expect(res.status, res.text).toBe(422);
    const types = res.body.detail.map((issue: { type: string }) => issue.type).sort();
    expect(types).toContain('extra_forbidden');
    const inPlace = checkBody(
      { bytes: Buffer.from('{"business":"lb","name":"","extra":1}'), charset: 'utf-8' },
      cairn.routes.find((r) => r.operationId === 'createTask')?.body,
    );
    expect(res.body).toEqual({ detail: inPlace.kind === 'invalid' ? inPlace.issues : [] });
  });

  it('refuses a large body that is not JSON, or a corrupt gzip of one, with a 400 problem', async () => {
    const malformed = await send('/api/v1/tasks', `{"business":"lb","name":"x"${padding},}`);
    expectProblem(malformed, 400);
    expect(malformed.body.detail).toBe('The request body is not valid JSON.');
    const gzip = gzipSync(`{"business":"lb","name":"x"${padding}}`);
    const badChecksum = Buffer.from(gzip);
    badChecksum.writeUInt32LE(
      (badChecksum.readUInt32LE(gzip.length - 8) ^ 1) >>> 0,
      gzip.length - 8,
    );
    const notGzip = Buffer.alloc(200_000, 'not gzip at all ');
    for (const body of [badChecksum, gzip.subarray(0, gzip.length - 6), notGzip]) {
      expectProblem(await send('/api/v1/tasks', body, { 'content-encoding': 'gzip' }), 400);
    }
  });

  it('refuses a lone surrogate deep in a large body with a 422 at its place', async () => {
    const res = await send('/api/v1/tasks', `{"business":"lb","name":"\\ud800"${padding}}`);
    expect(res.status, res.text).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'name'], type: 'string_unicode' }),
    ]);
  });

  it('answers many large bodies at once, each with its own outcome', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        send('/api/v1/tasks', `{"business":"lb","name":"${i % 2 ? '' : `n${i}`}"${padding}}`),
      ),
    );
    answers.forEach((res, i) => {
      expect(res.status, res.text).toBe(i % 2 ? 422 : 201);
      if (i % 2 === 0) expect(res.body.data.name).toBe(`n${i}`);
    });
  });

  /** How many slabs the body pool lends right now (each taken and given straight back). */
  const freeSlabs = () => {
    const lent = [];
    for (let slab = cairn.bodyChecks.reserve(1); slab; slab = cairn.bodyChecks.reserve(1)) {
      lent.push(slab);
    }
    for (const slab of lent) slab.release();
    return lent.length;
  };

  it('keeps every slab of the pool whichever way a large body goes, in the router or not', async () => {
    const pool = freeSlabs();
    expect(pool).toBeGreaterThanOrEqual(4);
    const task = (name: string) => `{"business":"lb","name":"${name}"${padding}}`;
    for (let round = 0; round < pool + 1; round++) {
      // Through the router: created, invalid, not JSON.
      expect((await send('/api/v1/tasks', task(`kept${round}`))).status).toBe(201);
      expect((await send('/api/v1/tasks', task(''))).status).toBe(422);
      expect((await send('/api/v1/tasks', `${task('x')},`)).status).toBe(400);
      // Past the router: no such path, a method the path does not take, no token at all.
      expect((await send('/api/v1/nowhere', task('x'))).status).toBe(404);
      expect((await send('/healthz', task('x'))).status).toBe(405);
      const anonymous = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: { 'content-type': 'application/json' },
        raw: task('x'),
      });
      expect(anonymous.status).toBe(401);
    }
    // A client that hangs up halfway through a body the router has started reading.
    const socket = net.connect(Number(new URL(cairn.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: ${cairn.auth.Authorization}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n{"name":"cut"${' '.repeat(50_000)}`,
    );
    await waitFor(async () => freeSlabs() < pool || undefined);
    socket.destroy();
    await waitFor(async () => freeSlabs() === pool || undefined);
    expect(freeSlabs()).toBe(pool);
  });
});
