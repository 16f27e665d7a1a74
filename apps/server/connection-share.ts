import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';

export interface ConnectionShareLimits {
  /** Connections the server holds at most, but for a moment while one leaves for another. */
  readonly maxConnections: number;
  /** Connections one address (see `addressKey`) holds at most. */
  readonly perAddress: number;
  /**
   * The keep-alive window the server announces (`Keep-Alive: timeout=…`): a client may send its
   * next request on an idle connection until then, so none is pushed out sooner.
   */
  readonly keepAliveMs: number;
}

/**
 * How long a fresh connection (no request yet) is left alone before it may be pushed out: a
 * client sends its request head right after connecting, a slow-header socket is older.
 */
export const FRESH_GRACE_MS = 1_000;

interface Connection {
  readonly socket: Socket;
  readonly holder: Holder;
  /**
   * Responses to requests received and not yet answered (more than one when a client
   * pipelines), the first being written.
   */
  readonly responses: ServerResponse[];
  /** Requests answered on it: none yet means a fresh connection. */
  answered: number;
  /** When it last started waiting for request headers. */
  waitingSince: number;
  /** Bytes read from it by then: more since means part of the next request head is in. */
  readWhenWaiting: number;
  /** Chosen to make room, closed once it is sure no request is arriving on it. */
  leaving: boolean;
}

interface Holder {
  readonly key: string;
  count: number;
  /**
   * Its connections waiting for request headers (fresh, or idle after an answer), in the order
   * they started waiting: the first is the slowest.
   */
  readonly waiting: Map<Socket, Connection>;
}

/** What the share knows of a connection, for whoever else closes connections. */
export interface ConnectionStates {
  /** Whether a response has started on this socket: nothing else may be written there now. */
  answering(socket: Socket): boolean;
  /**
   * Closes `socket` if it is idle and nothing arrives on it meanwhile: checked after the event
   * loop has read what the kernel holds for it, since a timer that fired late (a busy machine)
   * may find the client's next request already there.
   */
  closeIfIdle(socket: Socket): void;
  /**
   * `closeIfIdle` for every connection its client can no longer mean to send on: silent for
   * `FRESH_GRACE_MS` since it opened, or idle past the announced keep-alive window (a drain's
   * sweep: closing one inside the window races the client's next request, which it sees reset).
   */
  closeSpent(): void;
}

const shared = new WeakMap<Server, ConnectionStates>();

/** The states of a server whose connections `shareConnections` tracks. */
export function connectionStates(server: Server): ConnectionStates | undefined {
  return shared.get(server);
}

/**
 * Shares the connection cap between client addresses, so one address holding many slow
 * sockets cannot lock every other client out:
 * - an address over its share has its new connection closed at once;
 * - the server does not sit full while anyone holds a connection that may go: one with part of
 *   a request head waiting for the rest (a slow-header client), one that has sent nothing for
 *   `FRESH_GRACE_MS` since it opened, or one idle past the announced keep-alive window. A
 *   connection that takes the last free place pushes out the slowest such connection of the
 *   address holding the most, so the next client, from whatever address, is let in and judged;
 *   one past the cap (Node's own cap sits higher, see http-server.ts) stays only if someone
 *   can go in its place.
 * A connection with a request in flight, an idle one its client may still reuse, or one on
 * which bytes arrive while it is being closed is never pushed out: closing those races the
 * client's next request, which it then sees reset. The headers, request and keep-alive
 * deadlines still apply to every connection.
 * A lone address is let fill the whole cap when its share allows it, until another address
 * comes: then the slowest connection that may go of the address holding the most goes, and
 * from then on a free place is kept whoever holds the rest.
 */
export function shareConnections(server: Server, limits: ConnectionShareLimits): ConnectionStates {
  const perAddress = Math.min(limits.perAddress, limits.maxConnections);
  const holders = new Map<string, Holder>();
  const bySocket = new WeakMap<Socket, Connection>();
  let total = 0;
  // Set once an address other than the biggest holder has come to a full server.
  let contested = false;

  const startWaiting = (connection: Connection) => {
    // Re-inserted so the map stays ordered by the time each connection started waiting.
    connection.holder.waiting.delete(connection.socket);
    connection.waitingSince = Date.now();
    connection.readWhenWaiting = connection.socket.bytesRead;
    connection.holder.waiting.set(connection.socket, connection);
  };

  /**
   * Whether it may be pushed out: part of a request head has arrived and waits for the rest (a
   * slow-header client), or nothing has arrived since it started waiting for longer than its
   * client could still mean to send something (fresh: `FRESH_GRACE_MS`; idle after an answer:
   * the keep-alive window).
   */
  const mayLeave = (connection: Connection, now: number): boolean => {
    if (connection.leaving) return false;
    if (connection.socket.bytesRead > connection.readWhenWaiting) return true;
    return spent(connection, now);
  };

  /** Nothing has arrived on it for longer than its client could still mean to send something. */
  const spent = (connection: Connection, now: number): boolean => {
    if (connection.socket.bytesRead > connection.readWhenWaiting) return false;
    const grace = connection.answered === 0 ? FRESH_GRACE_MS : limits.keepAliveMs;
    return now - connection.waitingSince >= grace;
  };

  /** Its slowest connection that may be pushed out, if any. */
  const evictable = (holder: Holder, now: number): Connection | undefined => {
    for (const connection of holder.waiting.values()) {
      if (mayLeave(connection, now)) return connection;
    }
    return undefined;
  };

  /**
   * Closes the connection after the event loop has had two turns to read what the kernel holds
   * for it, unless a request or any byte arrived meanwhile.
   */
  const leave = (connection: Connection) => {
    connection.leaving = true;
    const { socket } = connection;
    const read = socket.bytesRead;
    setImmediate(() =>
      setImmediate(() => {
        connection.leaving = false;
        if (connection.responses.length > 0 || socket.bytesRead !== read) return;
        if (!connection.holder.waiting.has(socket)) return;
        socket.destroy();
      }),
    );
  };

  /**
   * Pushes out the slowest connection that may go of the address holding the most, if that
   * holds more than `than`; answers that address, if one was found.
   */
  const makeRoom = (than: number): Holder | undefined => {
    const now = Date.now();
    let victim: Connection | undefined;
    for (const holder of holders.values()) {
      if (holder.count <= (victim?.holder.count ?? than)) continue;
      victim = evictable(holder, now) ?? victim;
    }
    if (victim) leave(victim);
    return victim?.holder;
  };

  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const holder = holders.get(key) ?? { key, count: 0, waiting: new Map() };
    if (holder.count >= perAddress) {
      socket.destroy();
      return;
    }
    holders.set(key, holder);
    holder.count += 1;
    total += 1;
    const connection: Connection = {
      socket,
      holder,
      responses: [],
      answered: 0,
      waitingSince: 0,
      readWhenWaiting: 0,
      leaving: false,
    };
    bySocket.set(socket, connection);
    startWaiting(connection);
    socket.once('close', () => {
      holder.waiting.delete(socket);
      holder.count -= 1;
      total -= 1;
      if (holder.count === 0) holders.delete(key);
    });
    if (total > limits.maxConnections) {
      // Past the cap (Node's own sits higher, so this one is seen): it stays only if another
      // connection can go in its place.
      const made = makeRoom(0);
      if (!made) socket.destroy();
      else if (made !== holder) contested = true;
    } else if (total === limits.maxConnections && (holders.size > 1 || contested)) {
      makeRoom(0);
    }
  });

  server.on('drop', (dropped?: { remoteAddress?: string }) => {
    const held = holders.get(addressKey(dropped?.remoteAddress))?.count ?? 0;
    if ([...holders.values()].some((holder) => holder.count > held)) contested = true;
    makeRoom(held);
  });

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const connection = bySocket.get(req.socket);
    if (!connection) return;
    connection.responses.push(res);
    connection.holder.waiting.delete(connection.socket);
    res.once('close', () => {
      connection.responses.splice(connection.responses.indexOf(res), 1);
      connection.answered += 1;
      if (connection.responses.length === 0 && !connection.socket.destroyed)
        startWaiting(connection);
    });
  });

  const states: ConnectionStates = {
    answering: (socket) => bySocket.get(socket)?.responses[0]?.headersSent ?? false,
    closeIfIdle(socket) {
      const connection = bySocket.get(socket);
      if (!connection) socket.destroy();
      else if (connection.responses.length === 0 && !connection.leaving) leave(connection);
    },
    closeSpent() {
      const now = Date.now();
      for (const holder of holders.values()) {
        for (const connection of holder.waiting.values()) {
          if (!connection.leaving && spent(connection, now)) leave(connection);
        }
      }
    },
  };
  shared.set(server, states);
  return states;
}

/**
 * The address a connection counts against. An IPv4 address counts as itself, written the same
 * whether the server listens on IPv4 or dual-stack (`::ffff:a.b.c.d`). A public IPv6 address
 * counts as its /64: one host or household is routinely given a whole /64, so counting exact
 * addresses would give it billions of shares. Loopback, link-local and unique-local IPv6
 * addresses (one machine or one private network, as 127.x.y.z or 10.x.y.z are for IPv4) count
 * as themselves.
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remoteAddress);
  if (mapped) return mapped[1] as string;
  if (!remoteAddress.includes(':')) return remoteAddress;
  const groups = ipv6Groups(remoteAddress.split('%')[0] as string);
  if (!groups) return remoteAddress;
  const first = groups[0] as number;
  const local =
    groups.slice(0, 7).every((group) => group === 0) || // ::1 and ::
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xfe00) === 0xfc00; // unique-local fc00::/7
  if (local) return remoteAddress.toLowerCase();
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  if (net.isIPv6(address) === false) return undefined;
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (side: string) => (side === '' ? [] : side.split(':').map((g) => parseInt(g, 16)));
  const front = part(head);
  const back = tail === undefined ? [] : part(tail);
  const zeros = 8 - front.length - back.length;
  return [...front, ...Array.from({ length: zeros }, () => 0), ...back];
}
