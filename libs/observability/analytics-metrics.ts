import type { Route } from '../http/route.ts';
import { activeTraceIds } from '../tracing/tracing.ts';
import { type CairnMetrics, observeWithTrace } from './metrics.ts';

interface QueryAnswer {
  warnings?: Array<{ code?: unknown }>;
  metadata?: { source?: unknown; cache?: unknown };
}

/** A label from the answer's metadata; `none` where the answer has none (catalog, exports). */
const labelOf = (value: unknown): string => (typeof value === 'string' ? value : 'none');

/**
 * Wraps the analytics routes so every answer feeds the duration and warning families. It reads
 * the documented response (`warnings[].code`), so the query pipeline itself stays free of
 * metrics plumbing. Rows and bytes read come from `engineReads`: the response carries only the
 * caller's own figures.
 */
export function instrumentAnalyticsRoutes(routes: Route[], metrics: CairnMetrics): Route[] {
  const { duration, warnings } = metrics.analytics;
  return routes.map((route) => ({
    ...route,
    async handle(input) {
      const started = performance.now();
      const stop = (labels: { outcome: string; source: string; cache: string }) =>
        observeWithTrace(duration, labels, (performance.now() - started) / 1000, activeTraceIds());
      try {
        const result = await route.handle(input);
        const answer = (result.body ?? {}) as QueryAnswer;
        stop({
          outcome: 'ok',
          source: labelOf(answer.metadata?.source),
          cache: labelOf(answer.metadata?.cache),
        });
        for (const warning of answer.warnings ?? []) {
          if (typeof warning.code === 'string') warnings.inc({ code: warning.code });
        }
        return result;
      } catch (error) {
        stop({ outcome: 'error', source: 'none', cache: 'none' });
        throw error;
      }
    },
  }));
}

/**
 * What ClickHouse itself read for every statement it ran, neighbouring businesses' granules
 * included: an operator's figure, never shown to a caller (`QueryExecutorDeps.engineRead`).
 */
export function engineReads(
  metrics: CairnMetrics,
): (statistics: { rows_read: number; bytes_read: number }) => void {
  const { rowsRead, bytesRead, statements } = metrics.analytics;
  return (statistics) => {
    statements.inc();
    const rows = Number(statistics.rows_read);
    const bytes = Number(statistics.bytes_read);
    if (Number.isFinite(rows) && rows > 0) rowsRead.inc(rows);
    if (Number.isFinite(bytes) && bytes > 0) bytesRead.inc(bytes);
  };
}
