import type { Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { connectionStates } from './connection-share.ts';

/** How long an idle keep-alive connection may still bring one last request during a drain. */
const IDLE_GRACE_MS = 1_000;

export interface HttpDrain {
  readonly draining: boolean;
  /** Stops accepting connections and resolves once every in-flight request has been answered. */
  drain(): Promise<void>;
}

/**
 * Graceful HTTP shutdown. Closing an idle keep-alive socket races with a client that is just
 * sending its next request on it (the client sees a reset, the request is lost), and
 * `http.Server#close` does exactly that at once. So the drain only stops accepting at first;
 * every response from then on says `Connection: close`, which moves busy clients to a new
 * connection (refused) on their own; only after a grace period are sockets that stayed idle
 * closed, each only if nothing has arrived on it by the time the event loop has read what the
 * kernel holds (connection-share.ts). Sockets with a request in flight are never cut: the
 * deadline in main.ts bounds that.
 */
export function trackHttp(server: Server): HttpDrain {
  let draining = false;
  const inFlight = new Set<ServerResponse>();
  // Prepended so it runs before express answers anything synchronously.
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  return {
    get draining() {
      return draining;
    },
    async drain() {
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      // net.Server#close stops accepting without http.Server#close's immediate idle sweep.
      const closed = new Promise<void>((resolve) =>
        net.Server.prototype.close.call(server, () => resolve()),
      );
      const states = connectionStates(server);
      const closeIdle = () => (states ? states.closeIdle() : server.closeIdleConnections());
      let sweep: NodeJS.Timeout | undefined;
      const grace = setTimeout(() => {
        closeIdle();
        sweep = setInterval(closeIdle, 50);
      }, IDLE_GRACE_MS);
      try {
        await closed;
      } finally {
        clearTimeout(grace);
        clearInterval(sweep);
      }
    },
  };
}
