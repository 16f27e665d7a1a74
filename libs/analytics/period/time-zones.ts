import type { ClickHouseClient } from '@clickhouse/client';
import { canonicalTimezone } from './period.ts';

/**
 * The zones the running ClickHouse can load, by name. A query's zone must be known to both
 * engines: Intl resolves it (period maths, aliases), ClickHouse buckets with it. Intl accepts
 * names ClickHouse cannot load (`SystemV/AST4`, `SystemV/EST5EDT`), which would otherwise fail
 * inside the engine; the intersection is checked by the parser (see `parseQuery`).
 */
export async function loadClickHouseZones(client: ClickHouseClient): Promise<ReadonlySet<string>> {
  const result = await client.query({
    query: 'SELECT time_zone FROM system.time_zones',
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ time_zone: string }>();
  return new Set(rows.map((row) => row.time_zone));
}

/**
 * Zones ICU (and so Intl) still calls by a name IANA has since replaced: ICU keeps the names
 * CLDR chose long ago stable, while IANA renamed the zones (`Asia/Calcutta` became
 * `Asia/Kolkata`, `Europe/Kiev` `Europe/Kyiv`). Keyed by ICU's name, as Intl resolves it.
 */
const IANA_NAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/**
 * The IANA name of a zone Intl resolves, `Asia/Kolkata` for `Asia/Calcutta` or `Asia/Kolkata`:
 * what an answer states. The engine may know the zone only by the older name (see parseQuery).
 */
export function ianaTimezone(name: string): string {
  const intlName = canonicalTimezone(name) ?? name;
  return IANA_NAMES[intlName] ?? intlName;
}
