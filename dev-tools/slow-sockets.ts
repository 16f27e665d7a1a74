// The slow-header attack, for benches and tests: `sockets` connections that each send a partial
// request head and nothing more, re-opened as soon as the server closes one (its share refused
// at once, the header deadline, or room made for someone else). They run in a worker thread
// below the caller's priority, so the attacker's work does not slow whoever measures beside it.
// On Linux the whole of 127.0.0.0/8 is loopback: each local address is a client of its own.
import { Worker } from 'node:worker_threads';

export interface SlowSocketsOptions {
  url: string;
  /** Connections held in all, spread evenly over `addresses`. */
  sockets: number;
  /** Local addresses the connections come from. */
  addresses: readonly string[];
}

export interface SlowSockets {
  /** Connections opened so far, re-openings included. */
  connects(): Promise<number>;
  /** Stops re-opening, closes every connection and ends the worker (once, however often called). */
  stop(): Promise<number>;
}

const SLOW_SCRIPT = `
const net = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const { host, port, addresses, sockets } = workerData;
try { require('node:os').setPriority(10); } catch {}
let stopped = false;
let connects = 0;
const open = new Set();
function slow(localAddress) {
  if (stopped) return;
  connects += 1;
  const socket = net.connect({ host, port, localAddress });
  open.add(socket);
  socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\\r\\nHost: x\\r\\n'));
  socket.on('error', () => {});
  socket.on('close', () => {
    open.delete(socket);
    setImmediate(() => slow(localAddress));
  });
}
for (let i = 0; i < sockets; i += 1) slow(addresses[i % addresses.length]);
parentPort.on('message', (message) => {
  if (message === 'stop') {
    stopped = true;
    for (const socket of open) socket.destroy();
  }
  parentPort.postMessage({ connects });
});
`;

/** Starts holding the slow connections; resolves at once (they open in the background). */
export function holdSlowSockets(options: SlowSocketsOptions): SlowSockets {
  const { hostname, port } = new URL(options.url);
  const worker = new Worker(SLOW_SCRIPT, {
    eval: true,
    workerData: {
      host: hostname,
      port: Number(port),
      addresses: [...options.addresses],
      sockets: options.sockets,
    },
  });
  const ask = (message: string) =>
    new Promise<number>((resolve) => {
      worker.once('message', (answer: { connects: number }) => resolve(answer.connects));
      worker.postMessage(message);
    });
  let stopped: Promise<number> | undefined;
  return {
    connects: () => ask('count'),
    stop() {
      stopped ??= ask('stop').then(async (connects) => {
        await worker.terminate();
        return connects;
      });
      return stopped;
    },
  };
}

/** `count` loopback addresses from 127.0.0.`first` on: as many clients of one machine. */
export function loopbackAddresses(count: number, first = 2): string[] {
  if (first + count > 255) throw new Error('at most 253 loopback addresses from 127.0.0.2');
  return Array.from({ length: count }, (_, i) => `127.0.0.${first + i}`);
}
