import fs from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../libs/storage/database.ts';

/** Linux reports a process's CPU time in clock ticks of 1/100 s (USER_HZ) on every common build. */
const TICKS_PER_SECOND = 100;

/** CPU seconds spent so far by each Postgres backend serving `db`'s database, by process id. */
async function backendSeconds(db: Kysely<Database>): Promise<Map<number, number>> {
  const result = await sql<{ pid: number }>`
    select pid from pg_stat_activity where datname = current_database()`.execute(db);
  const seconds = new Map<number, number>();
  for (const { pid } of result.rows) {
    // The server runs elsewhere, or the backend is gone: nothing to count.
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    if (!stat) continue;
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
  }
  return seconds;
}

/**
 * CPU seconds this process and the database's Postgres backends (when on this machine) spend
 * on `work`: on a shared machine, where wall time says more about the neighbours, what the work
 * itself costs.
 */
export async function cpuUsed<T>(
  db: Kysely<Database>,
  work: () => Promise<T>,
): Promise<{ result: T; process: number; postgres: number }> {
  const before = await backendSeconds(db);
  const cpu = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(cpu);
  const after = await backendSeconds(db);
  let postgres = 0;
  for (const [pid, seconds] of after) postgres += seconds - (before.get(pid) ?? 0);
  return { result, process: (used.user + used.system) / 1e6, postgres };
}
