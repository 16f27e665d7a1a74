import { describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../libs/analytics/catalog/catalog.ts';
import { MAX_METRICS } from '../../libs/analytics/parse/query.schemas.ts';
import { BLOCKED_ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { generateFacts } from '../../libs/demo/fact-generator.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

describe('cli demo --facts: generated history', () => {
  const cairn = useCairn({ businesses: ['biz-0', 'biz-1'] });

  it('gives every metric something to show: due dates, overdue, blocked, removed edges', async () => {
    await generateFacts(cairn.engines.clickhouse.client, {
      facts: 20_000,
      seed: 11,
      businesses: 2,
      now: new Date(),
    });
    // As `demo` does after loading: generated facts carry no blocked changes.
    await backfillRollups({
      db: cairn.db,
      clickhouse: cairn.engines.clickhouse.client,
      builds: cairn.rollups,
      rollups: BLOCKED_ROLLUP_NAMES,
    });
    // A query names at most MAX_METRICS metrics: the catalog in as many queries as that takes.
    for (let i = 0; i < METRIC_NAMES.length; i += MAX_METRICS) {
      const metrics = METRIC_NAMES.slice(i, i + MAX_METRICS);
      const answer = await http(cairn.url, 'POST', '/api/v1/query', {
        body: { metrics, period: 'all_time' },
        headers: { ...cairn.auth, 'Cache-Control': 'no-cache' },
      });
      expect(answer.status, answer.text).toBe(200);
      const [row] = answer.body.data;
      for (const metric of metrics) expect(row[metric], metric).toBeGreaterThan(0);
    }
  }, 120_000);
});
