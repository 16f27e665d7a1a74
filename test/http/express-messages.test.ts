import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { applyRuntimeTuning } from '../../apps/server/runtime-tuning.ts';
import { expressMessages } from '../../libs/runtime/express-messages.ts';
import { tricksToApply } from '../../libs/runtime/index.ts';
import { useCairn } from '../support/cairn.ts';
import { http as request } from '../support/http.ts';

/**
 * The server builds each request and response on the app's own prototypes, so Express never
 * has to re-parent them (a third of the CPU of a small request on Node 20). Switched on here
 * whatever the Node version, since `auto` leaves it off on Node 24.
 */
describe('requests born as Express objects', () => {
  const cairn = useCairn({ businesses: ['em'], env: { CAIRN_RUNTIME_EXPRESS_MESSAGES: 'on' } });

  it('applies on Node 20 and 22 by default, not on 24 where it measured no faster', () => {
    const auto = { youngCollection: 'off', expressMessages: 'auto' } as const;
    expect(tricksToApply(auto, 20).expressMessages).toBe(true);
    expect(tricksToApply(auto, 22).expressMessages).toBe(true);
    expect(tricksToApply(auto, 24).expressMessages).toBe(false);
    expect(tricksToApply({ ...auto, expressMessages: 'on' }, 24).expressMessages).toBe(true);
    expect(tricksToApply({ ...auto, expressMessages: 'off' }, 20).expressMessages).toBe(false);
  });

  it('switched off, leaves the app and the server as Express and Node make them', () => {
    const app = express();
    const { request, response } = app;
    const tuning = applyRuntimeTuning({ youngCollection: 'off', expressMessages: 'off' }, 20);
    expect(tuning.serverOptions(app)).toEqual({});
    expect(tuning.applied).toEqual([]);
    expect(app.request).toBe(request);
    expect(app.response).toBe(response);
    // Switched on, the server gets the classes and the app their prototypes.
    const on = applyRuntimeTuning({ youngCollection: 'off', expressMessages: 'on' }, 24);
    const options = on.serverOptions(app) as ReturnType<typeof expressMessages>;
    expect(on.applied).toEqual(['express-messages']);
    expect(app.request).toBe(options.IncomingMessage.prototype);
    expect(Object.getPrototypeOf(app.request)).toBe(request);
  });

  it('makes Node messages whose prototypes are the app request and response', () => {
    const app = express();
    const { IncomingMessage: Request, ServerResponse: Response } = expressMessages(app);
    expect(Request).toBeDefined();
    expect(Response).toBeDefined();
    const req = new Request!(null as unknown as Socket);
    const res = new Response!(req);
    expect(Object.getPrototypeOf(req)).toBe(app.request);
    expect(Object.getPrototypeOf(res)).toBe(app.response);
    expect(req).toBeInstanceOf(http.IncomingMessage);
    expect(res).toBeInstanceOf(http.ServerResponse);
    // Node's constructors ran on them: their own state is in place.
    expect(req.headers).toEqual({});
    expect(res.statusCode).toBe(200);
  });

  /**
   * One request through the live server, with what the server made for it: the request and
   * response, and their prototypes as they arrived, ahead of Express's own listener (which
   * would re-parent a plain Node request).
   */
  async function liveRequest() {
    const arrived: Array<{ res: ServerResponse; prototypes: [unknown, unknown] }> = [];
    const look = (req: IncomingMessage, res: ServerResponse) => {
      arrived.push({ res, prototypes: [Object.getPrototypeOf(req), Object.getPrototypeOf(res)] });
    };
    cairn.server.prependListener('request', look);
    try {
      const answer = await request(cairn.url, 'GET', '/api/v1/tasks?per_page=1', {
        headers: cairn.auth,
      });
      return { answer, arrived };
    } finally {
      cairn.server.removeListener('request', look);
    }
  }

  it('hands the live server requests that already are the app request, and answers them', async () => {
    const { answer, arrived } = await liveRequest();
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(arrived.map(({ prototypes }) => prototypes)).toEqual([
      [cairn.app.request, cairn.app.response],
    ]);
  });

  it('keeps the live response an object with fast properties, not a hash table', async () => {
    const { answer, arrived } = await liveRequest();
    expect(answer.status).toBe(200);
    expect(arrived).toHaveLength(1);
    // Before: Node's constructor ran on an object sized for a wrapper, and the answered response
    // had become a dictionary-mode object.
    expect(hasFastProperties(arrived[0]!.res)).toBe(true);
    expect(
      hasFastProperties(
        new (expressMessages(express()).ServerResponse)(
          new http.IncomingMessage(null as unknown as Socket),
        ),
      ),
    ).toBe(true);
  });
});

/** V8's own answer, from a context of its own so nothing else in the process sees the syntax. */
function hasFastProperties(value: object): boolean {
  v8.setFlagsFromString('--allow-natives-syntax');
  try {
    return (vm.runInNewContext('(o) => %HasFastProperties(o)') as (o: object) => boolean)(value);
  } finally {
    v8.setFlagsFromString('--no-allow-natives-syntax');
  }
}
