import type { Route } from '../http/route.ts';
import type { CairnMetrics } from './metrics.ts';

interface QueryAnswer {
  metadata?: { rows_read?: unknown; bytes_read?: unknown };
  warnings?: Array<{ code?: unknown }>;
}

/**
 * Wraps the analytics routes so every answer feeds the analytics metric families. It reads the
 * documented response (`metadata.rows_read`, `bytes_read`, `warnings[].code`), so the query
 * pipeline itself stays free of metrics plumbing.
 */
export function instrumentAnalyticsRoutes(routes: Route[], metrics: CairnMetrics): Route[] {
  const { duration, rowsRead, bytesRead, warnings } = metrics.analytics;
  return routes.map((route) => ({
    ...route,
    async handle(input) {
      const stop = duration.startTimer();
      try {
        const result = await route.handle(input);
        stop({ outcome: 'ok' });
        const answer = (result.body ?? {}) as QueryAnswer;
        const rows = Number(answer.metadata?.rows_read);
        const bytes = Number(answer.metadata?.bytes_read);
        if (Number.isFinite(rows) && rows > 0) rowsRead.inc(rows);
        if (Number.isFinite(bytes) && bytes > 0) bytesRead.inc(bytes);
        for (const warning of answer.warnings ?? []) {
          if (typeof warning.code === 'string') warnings.inc({ code: warning.code });
        }
        return result;
      } catch (error) {
        stop({ outcome: 'error' });
        throw error;
      }
    },
  }));
}
