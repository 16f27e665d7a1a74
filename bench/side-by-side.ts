// One benchmark figure: a path through the service over HTTP (autocannon), then the statements
// the service sends, straight to Postgres on raw connections, with where the CPU went in each.
import { createHash } from 'node:crypto';
import autocannon from 'autocannon';
import type { Target } from './bench-target.ts';
import { formatSplit, startCpuSplit } from './cpu-split.ts';
import { rawQuery, rawRate } from './raw-rate.ts';

/**
 * One figure: `path` through the service, then `statements` in turn on one raw connection,
 * sent unnamed and then as named prepared statements.
 */
export async function sideBySide(
  target: Target,
  label: string,
  connections: number,
  path: string,
  statements: Array<{ sql: string; parameters: readonly unknown[] }>,
  labelWidth = 27,
): Promise<void> {
  const httpCpu = startCpuSplit(target.pid);
  const http = await autocannon({
    url: `${target.url}${path}`,
    connections,
    duration: target.seconds,
    headers: target.headers,
  });
  if (http.non2xx > 0) throw new Error(`${label}: ${http.non2xx} non-2xx answers`);
  const httpSplit = httpCpu();
  const rawCpu = startCpuSplit(undefined);
  const raw = await rawRate(target.pool, connections, target.seconds, async (client) => {
    for (const statement of statements)
      await rawQuery(client, statement.sql, [...statement.parameters]);
  });
  // The same statements, every one named and prepared (the service leaves those with a star
  // unnamed): the ratio against this client says how much of the figure is owed to preparing.
  // Named by their text, as pg wants one text per name on a connection.
  const named = statements.map((statement) => ({
    name: `bench_${createHash('sha1').update(statement.sql).digest('hex')}`,
    text: statement.sql,
    parameters: statement.parameters,
  }));
  const prepared = await rawRate(target.pool, connections, target.seconds, async (client) => {
    for (const { name, text, parameters } of named) {
      await rawQuery(client, { name, text, values: [...parameters] });
    }
  });
  const rate = http.requests.average;
  const cells = [
    label.padEnd(labelWidth),
    String(connections).padStart(4),
    rate.toFixed(1).padStart(13),
    String(http.latency.p50).padStart(6),
    String(http.latency.p99).padStart(6),
    raw.rate.toFixed(1).padStart(12),
    raw.p50.toFixed(1).padStart(6),
    raw.p99.toFixed(1).padStart(6),
    (rate / raw.rate).toFixed(2).padStart(5),
    prepared.rate.toFixed(1).padStart(13),
    (rate / prepared.rate).toFixed(2).padStart(5),
  ];
  console.log(
    `${cells.join('  ')}   service: ${formatSplit(httpSplit)}; raw: ${formatSplit(rawCpu())}`,
  );
}

/**
 * `q` over `count` tasks of one business: a term held by one task, one held by 0.1 % of them
 * and one held by a seventh. Names mix words, a 1-in-1000 tag and an md5 fragment, so their
 * trigrams are as varied as real ones.
 */
