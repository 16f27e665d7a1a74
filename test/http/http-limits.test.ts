import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createHttpServer, hardCap } from '../../apps/server/http-server.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { openSocket } from '../support/raw-socket.ts';

const REQUEST_TIMEOUT_MS = 1_500;
const MAX_CONNECTIONS = 8;

/** Slow or numerous clients cannot hold the server: every socket has a deadline and a cap. */
describe('HTTP limits', () => {
  const cairn = useCairn({
    businesses: ['hl'],
    env: {
      CAIRN_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      CAIRN_HTTP_HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS: '1000',
      CAIRN_HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    },
  });

  it('cuts off an authenticated body that trickles in, within the request deadline', async () => {
    const { socket, state } = openSocket(cairn.url);
    socket.write(
      `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: ${cairn.auth.Authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"business":`,
    );
    const started = Date.now();
    // Generous: Node checks deadlines every second, and the machine is busy.
    await waitFor(async () => state.closed, { timeoutMs: REQUEST_TIMEOUT_MS + 15_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 200);
    expect(state.received).toMatch(/^HTTP\/1\.1 408/);
  }, 30_000);

  it('cuts off headers that never finish', async () => {
    const { socket, state } = openSocket(cairn.url);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await waitFor(async () => state.closed, { timeoutMs: REQUEST_TIMEOUT_MS + 15_000 });
    expect(state.received).toMatch(/^HTTP\/1\.1 408/);
  }, 30_000);

  it('a request line and headers over 16 KiB: a 431 problem, then the connection closes', async () => {
    const q = encodeURIComponent(
      JSON.stringify({ metrics: ['tasks_created'], business: 'x'.repeat(20_000) }),
    );
    const { socket, state } = openSocket(cairn.url);
    socket.write(`GET /api/v1/query?q=${q} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await waitFor(async () => state.closed, { timeoutMs: 15_000 });
    const [head = '', body = ''] = state.received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(body)).toMatchObject({
      status: 431,
      title: 'Request Header Fields Too Large',
    });
  }, 30_000);

  it('closes idle keep-alive connections', async () => {
    const { socket, state } = openSocket(cairn.url);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(async () => state.received.includes('"ok"'));
    await waitFor(async () => state.closed, { timeoutMs: 15_000 });
  }, 30_000);

  it('refuses connections beyond the cap at once, and serves again when they go', async () => {
    expect(cairn.server.maxConnections).toBe(hardCap(MAX_CONNECTIONS));
    // The same app on a server with long deadlines, so no held socket is let go meanwhile.
    const server = createHttpServer(cairn.app, {
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 60_000,
      maxConnections: MAX_CONNECTIONS,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await refusesBeyondCap(`http://127.0.0.1:${port}`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);

  async function refusesBeyondCap(url: string) {
    const held = Array.from({ length: MAX_CONNECTIONS }, () => openSocket(url));
    for (const { socket } of held) socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(async () => held.every(({ state }) => state.received.includes('"ok"')));
    const extra = openSocket(url);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(async () => extra.state.closed);
    expect(extra.state.received).toBe('');
    for (const { socket } of held) socket.destroy();
    await waitFor(async () => {
      try {
        return (await http(url, 'GET', '/healthz')).status === 200;
      } catch {
        return false;
      }
    });
  }
});
