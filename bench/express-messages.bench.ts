// `npm run bench -- express-messages [--rounds 4] [--seconds 3] [--connections 8]`: the CPU a
// bare Express app spends on an empty route, with and without the request/response prototype
// swap of libs/runtime/express-messages.ts, in alternating rounds (off, on, off, on, …), each
// server in a child process of its own so the load generator shares no event loop with it.
// Run it under each Node version the switch's `auto` decides for.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import { expressMessages } from '../libs/runtime/express-messages.ts';
import { numberOption, textOption } from './options.ts';
import { serveChild } from './serve-child.ts';

const TICKS_PER_SECOND = 100;

function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function serve(swap: boolean): Promise<void> {
  const app = express();
  app.get('/empty', (_req, res) => {
    res.end();
  });
  const server = http.createServer(swap ? expressMessages(app) : {}, app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening http://127.0.0.1:${port}\n`);
  await new Promise(() => {});
}

async function measure(swap: boolean, seconds: number, connections: number) {
  const { child, url } = await serveChild('express-messages', ['--swap', swap ? 'on' : 'off']);
  try {
    const load = (duration: number) =>
      autocannon({ url: `${url}/empty`, connections, duration, pipelining: 1 });
    await load(1); // warm-up: optimised code before the measurement
    const before = cpuTicks(child.pid as number);
    const result = await load(seconds);
    const cpuSeconds = (cpuTicks(child.pid as number) - before) / TICKS_PER_SECOND;
    const requests = result.requests.total;
    return { cpuMicros: (cpuSeconds / requests) * 1e6, perSecond: requests / seconds };
  } finally {
    child.kill();
  }
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--serve')) return serve(textOption(args, 'swap', 'off') === 'on');
  const rounds = numberOption(args, 'rounds', 4);
  const seconds = numberOption(args, 'seconds', 3);
  const connections = numberOption(args, 'connections', 8);
  const figures: Record<'off' | 'on', string[]> = { off: [], on: [] };
  for (let round = 0; round < rounds; round++) {
    for (const swap of [false, true]) {
      const { cpuMicros, perSecond } = await measure(swap, seconds, connections);
      const figure = `${cpuMicros.toFixed(0)} µs (${Math.round(perSecond)}/s)`;
      figures[swap ? 'on' : 'off'].push(figure);
      process.stdout.write(`round ${round + 1} swap ${swap ? 'on ' : 'off'}: ${figure}\n`);
    }
  }
  process.stdout.write(
    `Node ${process.versions.node}, empty route, server CPU per request (requests/s), c=${connections}, ${seconds} s a round:\n` +
      `  without the swap: ${figures.off.join(', ')}\n  with the swap:    ${figures.on.join(', ')}\n`,
  );
}
