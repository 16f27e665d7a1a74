import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';

export interface ConnectionShareLimits {
  /** Connections the server holds at most (Node refuses any beyond it). */
  readonly maxConnections: number;
  /** Connections one address (see `addressKey`) holds at most. */
  readonly perAddress: number;
}

interface Connection {
  readonly socket: Socket;
  readonly holder: Holder;
  /** Requests received and not yet answered (more than one when a client pipelines). */
  inFlight: number;
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

/**
 * Shares the connection cap between client addresses, so one address holding many slow
 * sockets cannot lock every other client out:
 * - an address over its share has its new connection closed at once;
 * - the server never sits full while anyone holds a connection that waits for headers (fresh,
 *   trickling, or idle keep-alive): a connection that takes the last free place pushes out the
 *   slowest such connection of the address holding the most, so the next client, from
 *   whatever address, is let in and judged. A connection with a request in flight is never
 *   pushed out; the headers, request and keep-alive deadlines still apply to every connection.
 * A lone address is let fill the whole cap when its share allows it, until another address is
 * refused (Node refuses beyond the cap before anyone sees the connection): then the slowest
 * waiting connection of the address holding the most goes, so that client's next attempt gets
 * in, and from then on a free place is kept whoever holds the rest.
 */
export function shareConnections(server: Server, limits: ConnectionShareLimits): void {
  const perAddress = Math.min(limits.perAddress, limits.maxConnections);
  const holders = new Map<string, Holder>();
  const bySocket = new WeakMap<Socket, Connection>();
  let total = 0;
  // Set once an address other than the biggest holder has been refused for want of room.
  let contested = false;

  const startWaiting = (connection: Connection) => {
    // Re-inserted so the map stays ordered by the time each connection started waiting.
    connection.holder.waiting.delete(connection.socket);
    connection.holder.waiting.set(connection.socket, connection);
  };

  /** Closes the slowest waiting connection of the address holding the most, if over `than`. */
  const makeRoom = (than: number): void => {
    let victim: Holder | undefined;
    for (const holder of holders.values()) {
      if (holder.waiting.size > 0 && holder.count > (victim?.count ?? than)) victim = holder;
    }
    const slowest = victim?.waiting.values().next().value;
    slowest?.socket.destroy();
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
    const connection: Connection = { socket, holder, inFlight: 0 };
    bySocket.set(socket, connection);
    startWaiting(connection);
    socket.once('close', () => {
      holder.waiting.delete(socket);
      holder.count -= 1;
      total -= 1;
      if (holder.count === 0) holders.delete(key);
    });
    if (total >= limits.maxConnections && (holders.size > 1 || contested)) makeRoom(0);
  });

  server.on('drop', (dropped?: { remoteAddress?: string }) => {
    const held = holders.get(addressKey(dropped?.remoteAddress))?.count ?? 0;
    if ([...holders.values()].some((holder) => holder.count > held)) contested = true;
    makeRoom(held);
  });

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const connection = bySocket.get(req.socket);
    if (!connection) return;
    connection.inFlight += 1;
    connection.holder.waiting.delete(connection.socket);
    res.once('close', () => {
      connection.inFlight -= 1;
      if (connection.inFlight === 0 && !connection.socket.destroyed) startWaiting(connection);
    });
  });
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
