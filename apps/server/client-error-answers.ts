import { randomUUID } from 'node:crypto';
import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionStates } from './connection-share.ts';

/** How long a refused client may go on sending after its answer, read and thrown away. */
const LINGER_MS = 2_000;

/** What Node's HTTP parser refused, as the status the client gets. */
function statusOf(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

const DETAILS: Record<number, string> = {
  400: 'The request could not be read as HTTP/1.1.',
  408: 'The request did not arrive in time.',
  413: 'A chunk extension of the request body is too long.',
  431: 'The request line and headers together exceed the 16 KiB the server reads; send a long query in a POST body instead.',
};

/** The whole answer, written straight to the socket: there is no request to answer through. */
function answer(status: number): string {
  const requestId = randomUUID();
  const title = STATUS_CODES[status] ?? 'Bad Request';
  const body = JSON.stringify({
    type: `urn:cairn:problem:${title.toLowerCase().replace(/[^a-z]+/g, '-')}`,
    title,
    status,
    detail: DETAILS[status] ?? DETAILS[400],
    instance: '',
    request_id: requestId,
  });
  return [
    `HTTP/1.1 ${status} ${title}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-ID: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Answers what Node's HTTP parser refuses (a head over 16 KiB: 431, a malformed request: 400, a
 * request past its deadline: 408) with the whole problem, then closes gracefully: the answer
 * and a FIN go out, and whatever the client still sends is read and thrown away for a while.
 * Node's own answer is followed by an immediate destroy, which resets the connection while the
 * client is still sending its head: the client then sees the reset, not the answer. Nothing is
 * written into a response already under way; that connection is only closed.
 */
export function answerClientErrors(server: Server, states: ConnectionStates): void {
  const answered = new WeakSet<Socket>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Each further byte of a refused request is another parse error: already answered.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || states.answering(socket)) {
      socket.destroy();
      return;
    }
    socket.end(answer(statusOf(error.code)));
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
