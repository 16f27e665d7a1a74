import net from 'node:net';

/**
 * A TCP proxy between a pg client and a Postgres server, so a test sees what the client writes
 * and can make the server fall silent or the network drop, without touching the server itself.
 */
export interface WireProxy {
  /** The server's URL, with the proxy's address. */
  readonly url: string;
  /** The chunks the clients have written so far: each write the client makes is one. */
  writes(): number;
  /** Client connections through the proxy still open. */
  open(): number;
  /** Holds back whatever the server sends, as a frozen or partitioned server would. */
  freeze(): void;
  /** Passes on what was held back, and everything after it. */
  thaw(): void;
  /** Drops every connection, as a failing network would. */
  drop(): void;
  close(): Promise<void>;
}

export async function wireProxy(serverUrl: string): Promise<WireProxy> {
  const target = new URL(serverUrl);
  let writes = 0;
  let frozen = false;
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    const pair = { client, server };
    pairs.add(pair);
    if (frozen) server.pause();
    client.on('data', (chunk) => {
      writes += 1;
      server.write(chunk);
    });
    server.on('data', (chunk) => client.write(chunk));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const via = new URL(serverUrl);
  via.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  return {
    url: via.toString(),
    writes: () => writes,
    open: () => pairs.size,
    freeze() {
      frozen = true;
      for (const { server } of pairs) server.pause();
    },
    thaw() {
      frozen = false;
      for (const { server } of pairs) server.resume();
    },
    drop() {
      for (const { client } of pairs) client.destroy();
    },
    async close() {
      for (const { client } of pairs) client.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
