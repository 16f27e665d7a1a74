import type { Cairn } from '../apps/server/cairn.ts';
import type { AnalyticsDeps } from '../libs/analytics/query.service.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { type Config, loadConfig } from '../libs/config/config.ts';
import { projectionFreshness } from '../libs/projection/projection-freshness.ts';

/**
 * What a read benchmark needs of a started Cairn: a service-account token for `businesses`
 * (for the HTTP side) and the read side's dependencies (for the engine side, called directly).
 */
export async function benchReader(
  cairn: Cairn,
  config: Config,
  businesses: string[],
): Promise<{ token: string; deps: AnalyticsDeps }> {
  const db = cairn.engines.postgres.db;
  const { token } = await issueToken(
    db,
    { name: 'bench', scopes: ['analytics:read'], businesses, kind: 'service_account' },
    new Date(),
  );
  const deps: AnalyticsDeps = {
    clickhouse: cairn.engines.clickhouse.client,
    freshness: (at) => projectionFreshness(db, at),
    rollups: () => cairn.rollups.ready(),
    now: () => new Date(),
    maxRows: config.queryMaxRows,
    timeoutMs: config.queryTimeoutMs,
    staleAfterMs: config.staleAfterMs,
    maxMemoryBytes: config.queryMaxMemoryBytes,
  };
  return { token, deps };
}

/**
 * A read benchmark's configuration: its data directory, any port, silent, queries given all the
 * time they take, and a projector that stays out of the timings.
 */
export function benchConfig(dataDir: string, extra: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    CAIRN_QUERY_TIMEOUT_MS: '600000',
    CAIRN_PROJECTOR_POLL_MS: '60000',
    ...extra,
  });
}
