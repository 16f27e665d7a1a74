import net from 'node:net';

/** A plain TCP connection to a test server, with what it has been sent and whether it closed. */
export interface RawSocket {
  socket: net.Socket;
  state: { received: string; closed: boolean };
}

/** Connects to `url`'s host and port (from `localAddress`, if given) and records what arrives. */
export function openSocket(url: string, localAddress?: string): RawSocket {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port), localAddress });
  const client: RawSocket = { socket, state: { received: '', closed: false } };
  socket.on('data', (chunk) => {
    client.state.received += chunk.toString();
  });
  socket.on('close', () => {
    client.state.closed = true;
  });
  socket.on('error', () => {});
  return client;
}
