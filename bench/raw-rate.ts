import type pg from 'pg';
import { percentile } from './percentile.ts';

/**
 * A statement sent the way Cairn's Postgres adapter sends it: the callback goes with it, not
 * pg's promise, which would leave the raw client promoting its rows in every young-generation
 * collection (see `send` in libs/storage/postgres.ts) and lower the ceiling it stands for.
 */
export function rawQuery(
  client: pg.PoolClient,
  statement: string | pg.QueryConfig,
  values?: unknown[],
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: pg.QueryResult) =>
      error ? reject(error) : resolve(result);
    if (typeof statement === 'string') client.query(statement, values ?? [], done);
    else client.query(statement, done);
  });
}

/**
 * `workers` loops, each on its own pooled connection, for `seconds`: operations per second and
 * each operation's latency, timed as autocannon times a request (from send to answer).
 */
export async function rawRate(
  pool: pg.Pool,
  workers: number,
  seconds: number,
  operation: (client: pg.PoolClient) => Promise<void>,
): Promise<{ rate: number; p50: number; p99: number }> {
  const deadline = Date.now() + seconds * 1000;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < deadline) {
        const started = performance.now();
        const client = await pool.connect();
        try {
          await operation(client);
        } finally {
          client.release();
        }
        latencies.push(performance.now() - started);
      }
    }),
  );
  return {
    rate: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}
