import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyChecks } from '../../libs/http/body-check-pool.ts';
import { AppError, ValidationError } from '../../libs/http/errors.ts';
import type { Execution, IdempotencyLayer } from '../../libs/http/idempotency-layer.ts';
import { type CheckedInput, readInput } from '../../libs/http/read-input.ts';
import type { RequestContext, Route, TransactionOf } from '../../libs/http/route.ts';
import { runRoute, strategyOf } from '../../libs/http/run-route.ts';
import { sendResult } from '../../libs/http/send-result.ts';
import { NO_UNIT, type Transactor, type UnitOfWork } from '../../libs/http/unit-of-work.ts';

/** Starts `app` on a free port; the URL it answers on and how to stop it. */
async function serve(app: express.Express): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** What the test apps answer for anything thrown: which error it was and what it said. */
function reportError(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
  if (error instanceof AppError) {
    res.status(error.status).json({ kind: 'AppError', code: error.code, detail: error.detail });
  } else if (error instanceof ValidationError) {
    res.status(422).json({ kind: 'ValidationError', issues: error.issues });
  } else {
    res.status(500).json({ kind: 'other', message: String(error) });
  }
}

const route = {
  method: 'post',
  path: '/things/:id',
  operationId: 'makeThing',
  summary: 'Makes a thing (test route).',
  tags: ['test'],
  scope: null,
  params: {
    type: 'object',
    properties: { id: { type: 'integer', minimum: 1 } },
    required: ['id'],
    additionalProperties: false,
  },
  query: {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: 50, default: 20 } },
    additionalProperties: false,
  },
  body: {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 20 },
      done: { type: 'boolean', default: false },
    },
    required: ['name'],
    additionalProperties: false,
  },
  checks: ({ params }) => ({ idText: () => `id:${String(params.id)}` }),
  successStatus: 201,
  handle: async () => ({}),
} satisfies Route;

describe('readInput', () => {
  let bodyChecks: BodyChecks;
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    bodyChecks = new BodyChecks([route], { threads: 1 });
    const app = express();
    app.post(route.path, async (req, res, next) => {
      try {
        const input: CheckedInput = await readInput(req, res, route, { bodyChecks, hooks: {} });
        res.json(input);
      } catch (error) {
        next(error);
      }
    });
    app.use(reportError);
    ({ url, close } = await serve(app));
  });

  afterAll(async () => {
    await close?.();
    await bodyChecks?.close();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('gives back valid input parsed, with defaults filled in', async () => {
    const res = await post('/things/7', JSON.stringify({ name: 'kettle' }), {
      'idempotency-key': 'key-1',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      params: { id: 7 },
      query: { limit: 20 },
      body: { name: 'kettle', done: false },
      checked: { idText: 'id:7' },
      key: 'key-1',
    });
  });

  it('answers 400 (AppError) for a body that is not JSON', async () => {
    const res = await post('/things/7', '{"name": "kettle"');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ kind: 'AppError', code: 'bad_request' });
  });

  it('answers 400 (AppError) for a malformed Idempotency-Key', async () => {
    const res = await post('/things/7', JSON.stringify({ name: 'kettle' }), {
      'idempotency-key': 'k'.repeat(256),
    });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { detail: string };
    expect(answer).toMatchObject({ kind: 'AppError', code: 'bad_request' });
    expect(answer.detail).toMatch(/Idempotency-Key/);
  });

  it('lists bad path, query and body in one ValidationError', async () => {
    const res = await post('/things/abc?limit=0', JSON.stringify({ name: 5 }));
    expect(res.status).toBe(422);
    const answer = (await res.json()) as { kind: string; issues: Array<{ loc: unknown[] }> };
    expect(answer.kind).toBe('ValidationError');
    const locations = answer.issues.map((issue) => issue.loc);
    expect(locations).toEqual(
      expect.arrayContaining([
        ['path', 'id'],
        ['query', 'limit'],
        ['body', 'name'],
      ]),
    );
    expect(new Set(locations.map((loc) => loc[0]))).toEqual(new Set(['path', 'query', 'body']));
  });
});

const readRoute = { ...route, method: 'get', write: undefined } satisfies Route;
const writeRoute = { ...route, write: true } satisfies Route;

describe('strategyOf', () => {
  it.each([
    [writeRoute, undefined, 'write'],
    [writeRoute, 'key-1', 'write'],
    [readRoute, undefined, 'read'],
    [readRoute, 'key-1', 'keyed-read'],
  ] as const)('route write=%o… key %s → %s', (r, key, strategy) => {
    expect(strategyOf(r, key)).toBe(strategy);
  });
});

describe('runRoute', () => {
  const ctx: RequestContext = {
    requestId: 'req-1',
    principal: undefined as unknown as RequestContext['principal'],
    signal: new AbortController().signal,
    headers: {},
  };
  const input: CheckedInput = {
    params: { id: 7 },
    query: { limit: 20 },
    body: undefined,
    checked: {},
    key: undefined,
  };

  /** A transact and an idempotency layer that only note that they were called. */
  function recordingRunning() {
    const calls: string[] = [];
    const unit = { trx: 'trx' as unknown as TransactionOf, afterCommit: () => {} };
    const transact = (async (work: (uow: UnitOfWork<TransactionOf>) => Promise<unknown>) => {
      calls.push('transact');
      return work(unit);
    }) as Transactor<TransactionOf>;
    const idempotency: IdempotencyLayer = {
      execute: async (_op, work) => {
        calls.push('idempotency');
        return { result: await work(undefined), replayed: false };
      },
    };
    return { calls, running: { transact, idempotency } };
  }

  it("runs a 'read' with NO_UNIT, past neither transact nor the idempotency layer", async () => {
    const { calls, running } = recordingRunning();
    let seen: unknown;
    const handled = {
      ...readRoute,
      handle: async ({ uow, params }: { uow: unknown; params: unknown }) => {
        seen = uow;
        return { body: { params } };
      },
    } satisfies Route;
    const execution = await runRoute(handled, input, ctx, running);
    expect(seen).toBe(NO_UNIT);
    expect(calls).toEqual([]);
    expect(execution).toEqual({
      result: { status: 201, headers: {}, body: { params: { id: 7 } } },
      replayed: false,
    });
  });

  it("runs a 'write' through both (so the recorders above do notice calls)", async () => {
    const { calls, running } = recordingRunning();
    await runRoute(writeRoute, input, ctx, running);
    expect(calls).toEqual(['idempotency', 'transact']);
  });
});

describe('sendResult', () => {
  const getRoute = { ...readRoute, path: '/answer' } satisfies Route;
  const postRoute = { ...route, path: '/answer' } satisfies Route;
  let execution: Execution;
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const app = express();
    app.get('/answer', (req, res) => sendResult(req, res, getRoute, execution));
    app.post('/answer', (req, res) => sendResult(req, res, postRoute, execution));
    app.use(reportError);
    ({ url, close } = await serve(app));
  });

  afterAll(async () => {
    await close?.();
  });

  const answer = (method: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/answer`, { method, headers });

  it("sets the result's headers, and Idempotent-Replayed only on a replay", async () => {
    execution = {
      result: { status: 200, headers: { 'X-Thing': 'yes', Location: '/x/1' }, body: { a: 1 } },
      replayed: false,
    };
    const fresh = await answer('POST');
    expect(fresh.headers.get('x-thing')).toBe('yes');
    expect(fresh.headers.get('location')).toBe('/x/1');
    expect(fresh.headers.has('idempotent-replayed')).toBe(false);

    execution = { ...execution, replayed: true };
    const replay = await answer('POST');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('x-thing')).toBe('yes');
    expect(await replay.json()).toEqual({ a: 1 });
  });

  it("answers 304 with no body when a GET 200's ETag matches If-None-Match", async () => {
    execution = {
      result: { status: 200, headers: { ETag: '"v7"' }, body: { a: 1 } },
      replayed: false,
    };
    const matched = await answer('GET', { 'if-none-match': 'W/"v7"' });
    expect(matched.status).toBe(304);
    expect(matched.headers.get('etag')).toBe('"v7"');
    expect(await matched.text()).toBe('');

    const other = await answer('GET', { 'if-none-match': '"v6"' });
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual({ a: 1 });

    const post = await answer('POST', { 'if-none-match': '"v7"' });
    expect(post.status).toBe(200);
    expect(await post.json()).toEqual({ a: 1 });
  });

  it('does not answer 304 for a GET whose status is not 200', async () => {
    execution = {
      result: { status: 203, headers: { ETag: '"v7"' }, body: { a: 1 } },
      replayed: false,
    };
    const res = await answer('GET', { 'if-none-match': '"v7"' });
    expect(res.status).toBe(203);
    expect(await res.json()).toEqual({ a: 1 });
  });

  it('sends only the status when there is no body', async () => {
    execution = { result: { status: 202, headers: {} }, replayed: false };
    const res = await answer('POST');
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toBeNull();
    expect(await res.text()).toBe('');
  });

  it('sends JSON with its Content-Length in bytes', async () => {
    const body = { name: 'café ☕', n: [1, 2] };
    execution = { result: { status: 201, headers: {}, body }, replayed: false };
    const res = await answer('POST');
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = JSON.stringify(body);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(Buffer.byteLength(text)).toBeGreaterThan(text.length);
    expect(await res.text()).toBe(text);
  });
});
