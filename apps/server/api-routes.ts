import type { Kysely } from 'kysely';
import { queryBodySchema } from '../../libs/analytics/parse/query.schemas.ts';
import { queryRoutes } from '../../libs/analytics/query.routes.ts';
import type { AnalyticsDeps } from '../../libs/analytics/query.service.ts';
import { tokenRoutes } from '../../libs/auth/token.routes.ts';
import type { TokenCache } from '../../libs/auth/token-cache.ts';
import type { Config } from '../../libs/config/config.ts';
import { erasureRoutes } from '../../libs/erasure/erasure.routes.ts';
import type { ErasureDeps } from '../../libs/erasure/erasure.service.ts';
import type { BackgroundErasures } from '../../libs/erasure/erasure-background.ts';
import type { Route } from '../../libs/http/route.ts';
import { instrumentAnalyticsRoutes } from '../../libs/observability/analytics-metrics.ts';
import type { CairnMetrics } from '../../libs/observability/metrics.ts';
import {
  RATE_WINDOW_SECONDS,
  type RateClass,
  rateSubject,
} from '../../libs/rate-limit/rate-limit.ts';
import type { Database } from '../../libs/storage/database.ts';
import type { CursorKeys } from '../../libs/tasks/cursor-key.ts';
import { dependencyRoutes } from '../../libs/tasks/dependency.routes.ts';
import { graphReadRoutes } from '../../libs/tasks/graph/graph-reads.routes.ts';
import { taskRoutes } from '../../libs/tasks/task.routes.ts';
import { embedRoutes } from '../../libs/views/embed.routes.ts';
import { viewRoutes } from '../../libs/views/view.routes.ts';
import { viewGaugeRoutes } from '../../libs/views/view-gauges.routes.ts';
import { embedPage } from './embed-page.ts';

export interface ApiRouteDeps {
  config: Config;
  db: Kysely<Database>;
  now: () => Date;
  rateLimits: Record<RateClass, number>;
  tokenCache: TokenCache;
  erasure: Omit<ErasureDeps, 'signal' | 'onProgress'>;
  erasures: BackgroundErasures;
  wakeProjector: () => void;
  cursorKeys: CursorKeys;
  analytics: AnalyticsDeps;
  metrics: CairnMetrics;
}

/** Every operation of the API; the projector role serves none (only health and metrics). */
export function apiRoutes(deps: ApiRouteDeps): Route[] {
  const { config, db, now, rateLimits, analytics } = deps;
  if (config.role === 'projector') return [];
  const viewDeps = {
    db,
    now,
    analytics,
    querySchema: queryBodySchema(analytics.maxRows, analytics.zones),
    gauges: {
      maxSeries: config.viewMetricsMaxSeries,
      intervalMs: config.viewMetricsIntervalS * 1000,
    },
  };
  return [
    ...tokenRoutes({
      db,
      now,
      rateLimitOf: (principal) => {
        const tier =
          rateSubject(principal, () => '').rateClass === 'service_account'
            ? 'service_account'
            : 'user';
        return { tier, limit: rateLimits[tier], window_seconds: RATE_WINDOW_SECONDS };
      },
      revoked: () => deps.tokenCache.clear(),
    }),
    ...erasureRoutes({ erasure: deps.erasure, run: (business) => deps.erasures.run(business) }),
    ...taskRoutes(
      { db, now, wakeProjector: deps.wakeProjector },
      { maxListDepth: config.taskListMaxDepth },
    ),
    ...dependencyRoutes({
      db,
      now,
      wakeProjector: deps.wakeProjector,
      cursorKey: deps.cursorKeys.current,
      previousCursorKeys: deps.cursorKeys.previous,
    }),
    ...graphReadRoutes({ db, now }),
    ...instrumentAnalyticsRoutes(queryRoutes(analytics), deps.metrics),
    ...viewRoutes(viewDeps),
    ...embedRoutes({ ...viewDeps, page: embedPage }),
    ...viewGaugeRoutes(viewDeps),
  ];
}
