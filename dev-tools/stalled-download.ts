// A client that asks for a download and then stops reading it: the reader a hostile or broken
// client makes, for tests and benches of what the server holds meanwhile.
import { once } from 'node:events';
import net from 'node:net';

export interface StalledDownload {
  socket: net.Socket;
  /** The status line and headers, once they arrived. */
  head: string;
  /** Bytes of the body read before the reader stopped. */
  read: Buffer;
}

/** POSTs `body` as JSON on a raw socket, reads the response's head, then stops reading. */
export async function stalledDownload(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<StalledDownload> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  await once(socket, 'connect');
  const payload = JSON.stringify(body);
  socket.write(
    [
      `POST ${path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(payload)}`,
      '',
      payload,
    ].join('\r\n'),
  );
  let received = Buffer.alloc(0);
  const end = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const at = received.indexOf('\r\n\r\n');
      if (at >= 0) {
        socket.off('data', onData);
        socket.pause();
        resolve(at);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  return {
    socket,
    head: received.subarray(0, end).toString(),
    read: received.subarray(end + 4),
  };
}

/** Reads the rest of a stalled response until the server ends the connection. */
export async function readRest(stalled: StalledDownload): Promise<Buffer> {
  const chunks: Buffer[] = [stalled.read];
  stalled.socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  stalled.socket.resume();
  await new Promise<void>((resolve) => {
    stalled.socket.once('close', () => resolve());
    stalled.socket.once('end', () => stalled.socket.destroy());
  });
  return Buffer.concat(chunks);
}
