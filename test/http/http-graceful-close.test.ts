import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpDrain } from '../../apps/server/http-drain.ts';
import { createHttpServer } from '../../apps/server/http-server.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { openSocket } from '../support/raw-socket.ts';

/** Keeps the event loop busy, as a loaded machine or a long synchronous task does. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/** The server closes a connection only once no request of its client can be under way. */
describe('connections closed without cutting a request', () => {
  const cairn = useCairn({ businesses: ['gc'] });
  let server: http.Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function serve(
    keepAliveTimeoutMs: number,
    drain?: ReturnType<typeof httpDrain>,
  ): Promise<string> {
    server = createHttpServer(cairn.app, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs,
      maxConnections: 100,
    });
    const listening = server;
    drain?.track(listening);
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  }

  it('answers a request that is already in when the keep-alive timer fires late', async () => {
    const url = await serve(3_000);
    const { socket, state } = openSocket(url);
    const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    let answeredAt = 0;
    socket.on('data', () => {
      answeredAt ||= Date.now();
    });
    socket.write(request);
    await waitFor(async () => state.received.includes('"ok"'));
    expect(state.received).toContain('Keep-Alive: timeout=3');
    // The client sends its next request inside the announced window; the event loop is then
    // held past the moment Node's keep-alive timer (the window plus a second) is due, so that
    // timer runs before the request is read. Both timers are this process's: the client's, due
    // first, runs first however late the loop gets to them.
    await new Promise<void>((resolve) =>
      setTimeout(
        () => {
          socket.write(request);
          block(answeredAt + 4_600 - Date.now());
          resolve();
        },
        answeredAt + 2_000 - Date.now(),
      ),
    );
    await waitFor(async () => state.received.split('"ok"').length === 3 || state.closed, {
      timeoutMs: 15_000,
    });
    expect(state.received.match(/HTTP\/1.1 200/g)).toHaveLength(2);
  }, 60_000);

  it('answers a request head over 16 KiB with the whole 431, then closes', async () => {
    const url = await serve(5_000);
    // A client still sending its head when the server refuses it: a reset would lose the answer.
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${url}/healthz`, { headers: { 'x-filler': 'a'.repeat(256 * 1024) } }).then(
          async (res) => ({ status: res.status, body: await res.text() }),
          (error: Error & { cause?: { code?: string } }) => ({
            status: error.cause?.code ?? error.message,
            body: '',
          }),
        ),
      ),
    );
    expect(answers.map(({ status }) => status)).toEqual(Array(8).fill(431));
    expect(JSON.parse(answers[0]?.body ?? '')).toMatchObject({
      type: 'urn:cairn:problem:request-header-fields-too-large',
      status: 431,
    });
  }, 60_000);

  it('drains without closing an idle connection its client may still send on', async () => {
    const drain = httpDrain();
    const url = await serve(3_000, drain);
    const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const reused = openSocket(url);
    const idle = openSocket(url);
    for (const { socket, state } of [reused, idle]) {
      socket.write(request);
      await waitFor(async () => state.received.includes('"ok"'));
    }
    const answeredAt = Date.now();
    let drained = 0;
    const draining = drain.drain().then(() => {
      drained = Date.now();
    });
    // Well inside the announced window, as a pooled client sends its next request: answered,
    // and told that this answer is the connection's last.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(reused.state.closed).toBe(false);
    reused.socket.write(request);
    await waitFor(async () => reused.state.closed, { timeoutMs: 10_000 });
    expect(reused.state.received.match(/HTTP\/1.1 200/g)).toHaveLength(2);
    expect(reused.state.received).toContain('Connection: close');
    // The connection that stays idle is closed once the window has passed, and the drain ends.
    await draining;
    await waitFor(async () => idle.state.closed);
    expect(drained - answeredAt).toBeGreaterThanOrEqual(3_000);
    expect(idle.state.received.match(/HTTP\/1.1 200/g)).toHaveLength(1);
  }, 60_000);
});
