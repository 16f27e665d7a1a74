import http from 'node:http';
import type express from 'express';
import type { HttpLimits } from '../../libs/config/config.ts';
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
  server.maxConnections = limits.maxConnections;
  shareConnections(server, {
    maxConnections: limits.maxConnections,
    perAddress: limits.maxConnectionsPerAddress ?? limits.maxConnections,
  });
  return server;
}
