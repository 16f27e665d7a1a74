import type { QueryResponse } from '../analytics/query.service.ts';
import type { ViewRow } from './view.repository.ts';

/** One sample of `cairn_view_value`: its labels in order, and its value. */
export interface GaugeSample {
  labels: Array<[string, string]>;
  value: number;
}

/**
 * A view's answer as samples: one per row and metric, labelled with the view's id, the metric
 * and each dimension of the row (a null label as ""). A metric without a value (a rate over
 * nothing) is no sample: Prometheus has no null.
 */
export function gaugeSamples(view: ViewRow, answer: QueryResponse): GaugeSample[] {
  const columns = (answer.metadata.columns ?? []) as Array<{ name: string; kind: string }>;
  const dimensions = columns.filter((c) => c.kind === 'dimension').map((c) => c.name);
  const metrics = columns.filter((c) => c.kind === 'metric').map((c) => c.name);
  const samples: GaugeSample[] = [];
  for (const row of answer.data) {
    for (const metric of metrics) {
      const value = row[metric];
      if (typeof value !== 'number') continue;
      samples.push({
        labels: [
          ['view', view.id],
          ['metric', metric],
          ...dimensions.map((d): [string, string] => [d, row[d] == null ? '' : String(row[d])]),
        ],
        value,
      });
    }
  }
  return samples;
}

/** A label value in the text format: backslash, double quote and line feed escaped. */
const escaped = (value: string) =>
  value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

/** The Prometheus text exposition (0.0.4) of the samples, at most `maxSeries` of them. */
export function gaugeText(samples: readonly GaugeSample[], maxSeries: number): string {
  const lines = [
    "# HELP cairn_view_value A saved view's answer: one series per row and metric, labelled by the row's dimensions.",
    '# TYPE cairn_view_value gauge',
  ];
  for (const sample of samples.slice(0, maxSeries)) {
    const labels = sample.labels.map(([name, value]) => `${name}="${escaped(value)}"`).join(',');
    lines.push(`cairn_view_value{${labels}} ${sample.value}`);
  }
  return `${lines.join('\n')}\n`;
}
