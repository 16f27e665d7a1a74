import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../apps/server/http-server.ts';
import { keepAliveLoad } from '../../dev-tools/keep-alive-load.ts';
import { loopbackAddresses } from '../../dev-tools/slow-sockets.ts';
import { unlimited, useCairn } from '../support/cairn.ts';

const REQUESTS = Number(process.env.KEEP_ALIVE_LOAD_REQUESTS ?? 3_000);

/**
 * A client behind one address with a kept-alive pool (a dashboard server, a NAT) never sees a
 * request fail that it did not cause, while slow-header sockets from other addresses keep the
 * server at its connection cap and the pool's address holds the most connections.
 */
describe('a keep-alive pool beside slow sockets at the connection cap', () => {
  const cairn = useCairn({
    businesses: ['ka'],
    rateLimits: unlimited(),
    // One token runs 2 queries at a time and refuses a ninth waiting one (429), as it does a
    // third export: here every lane may wait for a query or export at once.
    env: { CAIRN_QUERY_QUEUE_PER_PRINCIPAL: '64', CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL: '64' },
  });
  let server: http.Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('answers every request of a 64-socket pool: none is reset or cut', async () => {
    // The defaults' deadlines, a cap the slow sockets fill: 6 addresses × 50 against 200 places.
    server = createHttpServer(cairn.app, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 200,
      maxConnectionsPerAddress: 100,
    });
    const listening = server;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    const load = await keepAliveLoad({
      url,
      authorization: cairn.auth.Authorization,
      business: 'ka',
      connections: 64,
      requests: REQUESTS,
      slow: { sockets: 300, addresses: loopbackAddresses(6) },
    });
    expect({ failed: load.failed, failures: load.failures }).toEqual({ failed: 0, failures: {} });
    expect(load.requests).toBe(REQUESTS);
    expect(load.refusals).toEqual({});
    // The attack was on: the slow addresses kept re-opening what the server closed.
    expect(load.slowConnects).toBeGreaterThan(300);
  }, 600_000);
});
