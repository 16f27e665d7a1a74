import type { RequestHandler, Response } from 'express';

/**
 * Cuts a response whose reader has stopped taking it: once the headers go out, the socket's
 * inactivity timer runs, and Node refreshes it on every write that reaches the kernel, so it
 * fires only when nothing has moved for `idleMs`. It is not armed before the headers, so a
 * slow query is never mistaken for a stalled reader. A cut chunked body lacks its last chunk,
 * which the client sees as a broken transfer, never as a whole answer. After the response,
 * Node sets the keep-alive timer in its place.
 */
export function cutStalledResponses(idleMs: number, onCut: () => void): RequestHandler {
  return (_req, res, next) => {
    const writeHead = res.writeHead;
    res.writeHead = function armed(this: Response, ...args: unknown[]) {
      res.writeHead = writeHead;
      res.setTimeout(idleMs, () => {
        onCut();
        res.destroy();
      });
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    next();
  };
}
