import { Readable } from 'node:stream';
import type { QueryRequest } from '../analytics/parse/query-parser.ts';
import type { QueryResponse } from '../analytics/query.service.ts';
import { allowedBusinesses } from '../auth/access.ts';
import { defineRoute, type Route } from '../http/route.ts';
import { listGaugeViews, type ViewRow } from './view.repository.ts';
import type { ViewDeps } from './view.routes.ts';
import { answerView } from './view.service.ts';
import { type GaugeSample, gaugeSamples, gaugeText } from './view-gauges.ts';

/** Who the engine's admission charges for a scrape's answers: the scrapes, not the scraper. */
const SCRAPER = 'metrics:views';

/**
 * `GET /metrics/views`: the `prometheus` views the caller can see, as gauges. Each view is
 * answered at most once per interval (and then through the answer cache), however many
 * Prometheus servers scrape, so a scrape costs the engine nothing more.
 */
export function viewGaugeRoutes(deps: ViewDeps): Route[] {
  const kept = new Map<string, { version: number; at: number; answer: Promise<QueryResponse> }>();
  // Not a request's signal: one scrape going away must not fail the answer another shares.
  const unbound = new AbortController().signal;
  const answerOf = (view: ViewRow): Promise<QueryResponse> => {
    const now = Date.now();
    const version = view.updated_at.getTime();
    const held = kept.get(view.id);
    if (held && held.version === version && now - held.at < deps.gauges.intervalMs) {
      return held.answer;
    }
    const answer = answerView(deps.analytics, view, view.query as unknown as QueryRequest, {
      signal: unbound,
      principal: SCRAPER,
      useCache: true,
    });
    kept.set(view.id, { version, at: now, answer });
    // A failed answer is not kept: the next scrape asks again.
    answer.catch(() => kept.delete(view.id));
    return answer;
  };
  return [
    defineRoute<unknown, unknown, unknown>({
      method: 'get',
      path: '/metrics/views',
      operationId: 'getViewGauges',
      summary: 'The views saved with `prometheus: true`, as Prometheus gauges',
      tags: ['views'],
      scope: 'reader',
      successStatus: 200,
      files: {
        'text/plain': {
          type: 'string',
          description:
            'The Prometheus text format: `cairn_view_value{view,metric,<dimensions>}`, one series per row and metric of each view the caller can see (the master key: all), at most `CAIRN_VIEW_METRICS_MAX_SERIES`.',
        },
      },
      async handle({ ctx }) {
        const views = await listGaugeViews(deps.db, allowedBusinesses(ctx.principal));
        const samples: GaugeSample[] = [];
        for (const view of views) {
          samples.push(...gaugeSamples(view, await answerOf(view)));
          if (samples.length >= deps.gauges.maxSeries) break;
        }
        return {
          stream: Readable.from([gaugeText(samples, deps.gauges.maxSeries)]),
          headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' },
        };
      },
    }),
  ];
}
