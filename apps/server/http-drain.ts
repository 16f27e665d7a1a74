import type { Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { connectionStates } from './connection-share.ts';

/** How often a drain looks for idle connections whose clients can no longer use them. */
const SWEEP_MS = 100;

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
 * `http.Server#close` does exactly that at once. So the drain only stops accepting; every
 * response from then on says `Connection: close`, which moves busy clients to a new
 * connection (refused) on their own; an idle socket is closed only once its client can no
 * longer mean to use it (past the announced keep-alive window, which undici and Node's agent
 * keep a second or two inside), and only if nothing has arrived on it by the time the event
 * loop has read what the kernel holds (connection-share.ts). Closing idle sockets any sooner
 * reset a pooled client's request on a loaded machine. Sockets with a request in flight are
 * never cut: the deadline in main.ts bounds the whole drain. Made before the server, so
 * readiness can ask it whether the server drains.
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
      // Without the share's states, Node's own keep-alive timer closes idle sockets.
      const states = connectionStates(served);
      const sweep = states ? setInterval(() => states.closeSpent(), SWEEP_MS) : undefined;
      try {
        await closed;
      } finally {
        clearInterval(sweep);
      }
    },
  };
}
