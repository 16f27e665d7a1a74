import type http from 'node:http';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addressKey } from '../../apps/server/connection-share.ts';
import { createHttpServer, type ServerLimits } from '../../apps/server/http-server.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { openSocket, type RawSocket } from '../support/raw-socket.ts';

// On Linux the whole of 127.0.0.0/8 is loopback: each of these is a client address of its own.
const OTHER = '127.0.0.1';
const SLOW_A = '127.0.0.2';
const SLOW_B = '127.0.0.3';
const SLOW_C = '127.0.0.4';

type Client = RawSocket;

/** One address shares the cap with the others: its slow sockets never lock them out. */
describe('connections shared between client addresses', () => {
  const cairn = useCairn({ businesses: ['cs'] });
  let server: http.Server | undefined;
  let url = '';
  const clients: Client[] = [];

  afterEach(async () => {
    for (const { socket } of clients.splice(0)) socket.destroy();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** The same app on a server with long deadlines, so no slow socket is let go meanwhile. */
  async function serve(limits: Pick<ServerLimits, 'maxConnections' | 'maxConnectionsPerAddress'>) {
    server = createHttpServer(cairn.app, {
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 60_000,
      ...limits,
    });
    const listening = server;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  }

  const held = () =>
    new Promise<number>((resolve, reject) =>
      server?.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );

  /** A socket from `localAddress` that sends `text` and nothing more. */
  function open(localAddress: string, text: string): Client {
    const client = openSocket(url, localAddress);
    client.socket.write(text);
    clients.push(client);
    return client;
  }

  /** Headers that never finish, the slow client of the attack. */
  const slow = (localAddress: string) => open(localAddress, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');

  /** Opens `count` slow sockets one after another, each once the server holds it. */
  async function hold(localAddress: string, count: number): Promise<Client[]> {
    const opened: Client[] = [];
    for (let i = 0; i < count; i += 1) {
      const before = await held();
      opened.push(slow(localAddress));
      await waitFor(async () => (await held()) > before);
    }
    return opened;
  }

  /** `GET /healthz` on a new connection from `localAddress`: its status, or the error's code. */
  function probe(localAddress: string): Promise<number | string> {
    return new Promise((resolve) => {
      const req = get(`${url}/healthz`, { localAddress, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 'no status'));
        res.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.setTimeout(15_000, () => req.destroy(new Error('probe timed out')));
    });
  }

  async function probes(localAddress: string, count: number): Promise<(number | string)[]> {
    const answers: (number | string)[] = [];
    for (let i = 0; i < count; i += 1) answers.push(await probe(localAddress));
    return answers;
  }

  it('closes an address’s connections beyond its share at once; another address is served', async () => {
    await serve({ maxConnections: 12, maxConnectionsPerAddress: 4 });
    const kept = await hold(SLOW_A, 4);
    const beyond = Array.from({ length: 6 }, () => slow(SLOW_A));
    await waitFor(async () => beyond.every(({ state }) => state.closed));
    expect(beyond.map(({ state }) => state.received)).toEqual(Array(6).fill(''));
    expect(kept.some(({ state }) => state.closed)).toBe(false);
    expect(await held()).toBe(4);
    expect(await probes(OTHER, 10)).toEqual(Array(10).fill(200));
  }, 60_000);

  it('makes room on a full server: the slowest waiting connection of the biggest holder goes', async () => {
    await serve({ maxConnections: 12, maxConnectionsPerAddress: 5 });
    const a = await hold(SLOW_A, 5);
    const b = await hold(SLOW_B, 4);
    const c = await hold(SLOW_C, 2);
    // The twelfth fills the server: the oldest of the address holding the most makes room.
    c.push(slow(SLOW_C));
    await waitFor(async () => a[0]?.state.closed);
    expect([...a.slice(1), ...b, ...c].some(({ state }) => state.closed)).toBe(false);
    expect(await held()).toBe(11);
    // Each probe takes the free place and pushes out another slow socket in turn.
    expect(await probes(OTHER, 20)).toEqual(Array(20).fill(200));
  }, 60_000);

  it('never pushes out a connection with a request in flight', async () => {
    await serve({ maxConnections: 6, maxConnectionsPerAddress: 6 });
    let requests = 0;
    server?.on('request', () => {
      requests += 1;
    });
    // Authenticated bodies that never finish: their requests are in flight until the deadline.
    const busy = Array.from({ length: 3 }, () =>
      open(
        SLOW_A,
        `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: ${cairn.auth.Authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"business":`,
      ),
    );
    await waitFor(async () => requests === 3);
    const waiting = await hold(SLOW_A, 2);
    // The sixth fills the server: the waiting socket goes, though the busy ones are older.
    slow(SLOW_B);
    await waitFor(async () => waiting[0]?.state.closed);
    expect(busy.some(({ state }) => state.closed)).toBe(false);
    expect(waiting[1]?.state.closed).toBe(false);
    expect(await probe(OTHER)).toBe(200);
  }, 60_000);

  it('lets a lone address fill the cap when its share allows, then keeps room for another', async () => {
    await serve({ maxConnections: 6 });
    const a = await hold(SLOW_A, 6);
    // Node refuses a connection beyond the cap before anyone sees it; the refusal makes room,
    // so the other address gets in at its next attempt.
    const answers: (number | string)[] = [];
    while (answers.length < 3 && answers.at(-1) !== 200) answers.push(await probe(OTHER));
    expect(answers.at(-1)).toBe(200);
    // The oldest went first.
    await waitFor(async () => a[0]?.state.closed);
    const closed = a.map(({ state }) => state.closed);
    expect(closed[0]).toBe(true);
    expect(closed).toEqual([...closed].sort((x, y) => Number(y) - Number(x)));
    // From then on a place stays free however the lone address refills the server.
    const later: (number | string)[] = [];
    for (let i = 0; i < 10; i += 1) {
      for (let j = 0; j < 2; j += 1) slow(SLOW_A);
      await waitFor(async () => (await held()) === 5);
      later.push(await probe(OTHER));
    }
    expect(later).toEqual(Array(10).fill(200));
  }, 60_000);
});

describe('the address a connection counts against', () => {
  it('counts IPv4 as itself, also when a dual-stack server sees it IPv4-mapped', () => {
    expect(addressKey('127.0.0.2')).toBe('127.0.0.2');
    expect(addressKey('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(addressKey('::FFFF:203.0.113.9')).toBe('203.0.113.9');
  });

  it('counts a public IPv6 address by its /64, so one host cannot multiply its share', () => {
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });

  it('counts loopback, link-local and unique-local IPv6 addresses one by one', () => {
    expect(addressKey('::1')).toBe('::1');
    expect(addressKey('fe80::1%eth0')).toBe('fe80::1%eth0');
    expect(addressKey('fe80::2')).not.toBe(addressKey('fe80::3'));
    expect(addressKey('fd12:3456:789a:1::5')).toBe('fd12:3456:789a:1::5');
    expect(addressKey(undefined)).toBe('unknown');
  });
});
