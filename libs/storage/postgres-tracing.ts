import type { LogEvent } from 'kysely';
import { recordFinished, recordingNow } from '../tracing/tracing.ts';

/** Statement text kept on a span: enough to recognise it, never the values (they are bound). */
const MAX_TEXT = 2_000;

/**
 * Kysely's log hook, as one span per Postgres statement under the request or batch that ran
 * it. Installed only while tracing runs; Kysely times the statement itself.
 */
export function traceStatements(system: 'postgresql'): (event: LogEvent) => void {
  return (event) => {
    // Most statements run outside any sampled trace: they skip the text work below.
    if (!recordingNow()) return;
    const text = event.query.sql;
    const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
    recordFinished(
      operation,
      event.queryDurationMillis,
      {
        'db.system.name': system,
        'db.operation.name': operation,
        'db.query.text': text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text,
      },
      event.level === 'error' ? event.error : undefined,
    );
  };
}
