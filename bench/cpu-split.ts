// Where the machine's CPU went during a measurement: the service process, this load-generating
// process, and Postgres' backends. On a small box all three share the cores, so a ratio against
// a raw client is only readable next to this split. Linux only (/proc); elsewhere it reports
// nothing rather than guessing.
import fs from 'node:fs';

const TICKS_PER_SECOND = 100;

type Ticks = Map<number, { comm: string; ticks: number }>;

function readTicks(): Ticks {
  const ticks: Ticks = new Map();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return ticks;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // comm may hold spaces and parentheses: fields resume after the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      ticks.set(Number(entry), { comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The process ended between listing and reading.
    }
  }
  return ticks;
}

export interface CpuSplit {
  service: number;
  load: number;
  postgres: number;
}

/** Starts counting; the returned function gives each party's CPU in % of one core. */
export function startCpuSplit(servicePid: number | undefined): () => CpuSplit {
  const before = readTicks();
  const started = performance.now();
  return () => {
    const after = readTicks();
    const seconds = (performance.now() - started) / 1000;
    const split = { service: 0, load: 0, postgres: 0 };
    for (const [pid, now] of after) {
      const used = now.ticks - (before.get(pid)?.ticks ?? 0);
      if (pid === servicePid) split.service += used;
      else if (pid === process.pid) split.load += used;
      else if (now.comm === 'postgres') split.postgres += used;
    }
    const percent = (ticks: number) => Math.round((ticks / TICKS_PER_SECOND / seconds) * 100);
    return {
      service: percent(split.service),
      load: percent(split.load),
      postgres: percent(split.postgres),
    };
  };
}

export const formatSplit = (split: CpuSplit): string =>
  `cpu% service ${split.service}, load ${split.load}, postgres ${split.postgres}`;
