import type { Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { connectionStates } from './connection-share.ts';

/** How long an idle keep-alive connection may still bring one last request during a drain. */
const IDLE_GRACE_MS = 1_000;

export interface HttpDrain {
  readonly draining: boolean;
  /** Follows the requests `server` answers; called once, before it listens. */
  track(server: Server): void;
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
 * deadline in main.ts bounds that. Made before the server, so readiness can ask it whether
 * the server drains.
 */
export function httpDrain(): HttpDrain {
  let draining = false;
  let server: Server | undefined;
  const inFlight = new Set<ServerResponse>();
  return {
    get draining() {
      return draining;
    },
    track(tracked) {
      server = tracked;
      // Prepended so it runs before express answers anything synchronously.
      server.prependListener('request', (_req, res: ServerResponse) => {
        if (draining) res.shouldKeepAlive = false;
        inFlight.add(res);
        res.once('close', () => inFlight.delete(res));
      });
    },
    async drain() {
      draining = true;
      const served = server;
      if (!served) return;
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      // net.Server#close stops accepting without http.Server#close's immediate idle sweep.
      const closed = new Promise<void>((resolve) =>
        net.Server.prototype.close.call(served, () => resolve()),
      );
      const states = connectionStates(served);
      const closeIdle = () => (states ? states.closeIdle() : served.closeIdleConnections());
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
