import type { Send, Wire } from './postgres-send.ts';

/**
 * How much longer than the server's statement timeout the client waits before giving up: a
 * stopped or partitioned server is answered within the statement timeout and this grace, with
 * room left for the answer itself inside a second.
 */
export const CLIENT_GRACE_MS = 500;

/**
 * The client's own limit on waiting for an answer, for a server that answers nothing at all
 * (stopped, partitioned) and so never enforces its own `statement_timeout`. When it runs out,
 * the connection is destroyed: the server may still hold the statement, so nothing else may
 * follow it on this connection (every statement queued behind it fails with the connection, and
 * every later one is refused unsent), and a transaction whose COMMIT was never sent is rolled
 * back by the server when it notices.
 */
export function withReadDeadline(next: Send, limitMs: number, wire: () => Wire): Send {
  let timedOut: Error | undefined;
  return (statement) => {
    if (timedOut) return Promise.reject(timedOut);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new Error('Query read timeout');
        timedOut = error;
        reject(error);
        wire().destroy();
      }, limitMs);
      next(statement).then(
        (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  };
}
