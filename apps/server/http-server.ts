import http from 'node:http';
import type { Socket } from 'node:net';
import type express from 'express';
import type { HttpLimits } from '../../libs/config/config.ts';
import { answerClientErrors } from './client-error-answers.ts';
import { shareConnections } from './connection-share.ts';

/** The HTTP limits; without a per-address share one address may hold the whole cap. */
export type ServerLimits = Omit<HttpLimits, 'maxConnectionsPerAddress'> &
  Partial<Pick<HttpLimits, 'maxConnectionsPerAddress'>>;

/**
 * The HTTP server with every limit a slow or greedy client could otherwise exhaust: headers and
 * whole-request deadlines (a body trickled a byte at a time is cut off, 408), an idle keep-alive
 * limit, and a connection cap shared between client addresses (connection-share.ts) so that one
 * address holding slow sockets cannot lock the others out. Node checks the two deadlines on an
 * interval, kept short so a limit means what it says within a second.
 *
 * It never closes a connection under a request its client has sent: connections are pushed out
 * only once idle past a grace, Node's keep-alive timer (which fires a second after the window the
 * server announces) closes a connection only if nothing has arrived on it, and a refused request
 * gets its whole answer with `Connection: close` before the connection ends
 * (client-error-answers.ts).
 */
export function createHttpServer(
  app: express.Express,
  limits: ServerLimits,
  /** What runtime tuning gives the server (runtime-tuning.ts): request and response classes. */
  tuning: http.ServerOptions = {},
): http.Server {
  const server = http.createServer(
    {
      ...tuning,
      requestTimeout: limits.requestTimeoutMs,
      // Node refuses a headers deadline later than the whole request's.
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    app,
  );
  // Node closes a connection past its own cap before anyone sees it, whatever it was about to
  // send: that cap sits above ours, so a newcomer past ours is seen and let in whenever a slow
  // connection can go in its place (connection-share.ts).
  server.maxConnections = hardCap(limits.maxConnections);
  const states = shareConnections(server, {
    maxConnections: limits.maxConnections,
    perAddress: limits.maxConnectionsPerAddress ?? limits.maxConnections,
    keepAliveMs: limits.keepAliveTimeoutMs,
  });
  // With a listener here Node leaves timed-out sockets to it. The only socket timers are the
  // keep-alive one (idle, no response) and a stalled response's (stalled-responses.ts handles
  // it): an idle connection is closed unless its next request has already arrived, which a
  // timer firing late on a busy event loop would otherwise reset.
  server.on('timeout', (socket: Socket) => {
    if (!states.answering(socket)) states.closeIfIdle(socket);
  });
  answerClientErrors(server, states);
  return server;
}

/** Node's own connection cap: twice ours, room for newcomers to be judged. */
export function hardCap(maxConnections: number): number {
  return Math.min(2 * maxConnections, 2 ** 31 - 1);
}

/**
 * The listen backlog: room in the kernel's queue for a burst of new connections as large as the
 * cap (the kernel bounds it by `net.core.somaxconn`), so none waits for a SYN retry meanwhile.
 */
export function listenBacklog(limits: Pick<HttpLimits, 'maxConnections'>): number {
  return Math.max(511, Math.min(limits.maxConnections, 65_535));
}
