import type { ClickHouseClient } from '@clickhouse/client';
import { ZONES_STATEMENT } from './compile/engine-zones.ts';

/**
 * The zones the running ClickHouse can load, by name. A query's zone must be known to both
 * engines: Intl resolves it (period maths, aliases), ClickHouse buckets with it. Intl accepts
 * names ClickHouse cannot load (`SystemV/AST4`, `SystemV/EST5EDT`), which would otherwise fail
 * inside the engine; the intersection is checked by the parser (see `parseQuery`).
 */
export async function loadClickHouseZones(client: ClickHouseClient): Promise<ReadonlySet<string>> {
  const result = await client.query({
    query: ZONES_STATEMENT,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ time_zone: string }>();
  return new Set(rows.map((row) => row.time_zone));
}
