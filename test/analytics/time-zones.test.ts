import { describe, expect, it } from 'vitest';
import { loadClickHouseZones } from '../../libs/analytics/clickhouse-zones.ts';
import { canonicalTimezone } from '../../libs/analytics/period/period.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

const SYSTEM_V = [
  'AST4',
  'AST4ADT',
  'CST6',
  'CST6CDT',
  'EST5',
  'EST5EDT',
  'HST10',
  'MST7',
  'MST7MDT',
  'PST8',
  'PST8PDT',
  'YST9',
  'YST9YDT',
].map((zone) => `SystemV/${zone}`);

/** A query's zone is one both Intl and the running ClickHouse can load, or a 422. */
describe('time zones', () => {
  const cairn = useCairn({ businesses: ['tz'] });

  it('accepts exactly the zones both engines load: every zone Intl accepts is swept', async () => {
    const client = cairn.engines.clickhouse.client;
    const zones = await loadClickHouseZones(client);
    const candidates = new Set([...Intl.supportedValuesOf('timeZone'), ...zones, ...SYSTEM_V]);
    const accepted: string[] = [];
    const refused: string[] = [];
    for (const name of candidates) {
      const canonical = canonicalTimezone(name);
      if (canonical === null) continue;
      (zones.has(canonical) ? accepted : refused).push(canonical);
    }
    expect(accepted.length).toBeGreaterThan(300);
    expect(refused).toEqual(expect.arrayContaining(['SystemV/AST4', 'SystemV/EST5EDT']));
    // Everything accepted really loads in ClickHouse, in one statement per 100 zones.
    const unique = [...new Set(accepted)];
    for (let i = 0; i < unique.length; i += 100) {
      const batch = unique.slice(i, i + 100);
      const params = Object.fromEntries(batch.map((zone, j) => [`z${j}`, zone]));
      const columns = batch.map((_, j) => `toStartOfDay(now(), {z${j}:String}) AS c${j}`);
      const result = await client.query({
        query: `SELECT ${columns.join(', ')}`,
        query_params: params,
        format: 'JSONEachRow',
      });
      expect(await result.json()).toHaveLength(1);
    }
    // Everything refused is answered 422 at body.timezone, with a time dimension too.
    for (const zone of new Set(refused)) {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        headers: cairn.auth,
        body: { metrics: ['tasks_created'], dimensions: ['day'], timezone: zone },
      });
      expect(res.status, `${zone}: ${res.text.slice(0, 200)}`).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'timezone']);
    }
  }, 120_000);

  it('answers a day series in an accepted zone, aliases included', async () => {
    for (const zone of ['Europe/Paris', 'US/Pacific', 'Asia/Kathmandu', 'EST']) {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        headers: cairn.auth,
        body: {
          metrics: ['tasks_created'],
          dimensions: ['day'],
          timezone: zone,
          period: 'last_7_days',
        },
      });
      expect(res.status, `${zone}: ${res.text.slice(0, 200)}`).toBe(200);
    }
  });
});
