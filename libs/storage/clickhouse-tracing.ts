import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { inSpan, recordingNow, SpanKind } from '../tracing/tracing.ts';

const TRACED = new Set<PropertyKey>(['query', 'command', 'exec', 'insert']);
const MAX_TEXT = 2_000;

interface StatementParams {
  query?: string;
  table?: string;
  query_id?: string;
}

/**
 * One span per ClickHouse statement under the request or batch that sent it, carrying the
 * statement's `query_id` (one is generated when the caller set none), so a slow span leads to
 * the server's own `system.query_log` row. The span ends when the engine answers; rows a caller
 * streams afterwards are not in it. Installed only while tracing runs.
 */
export function traceClickHouse(
  client: ClickHouseClient,
  system: 'server' | 'chdb',
): ClickHouseClient {
  return new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function' || !TRACED.has(key)) return value;
      const method = value.bind(target) as (params: StatementParams) => Promise<unknown>;
      return (params: StatementParams) => {
        if (!recordingNow()) return method(params);
        const queryId = params.query_id ?? randomUUID();
        const text = params.query ?? (params.table ? `INSERT INTO ${params.table}` : '');
        const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? String(key).toUpperCase();
        return inSpan(
          `clickhouse ${operation}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'db.system.name': 'clickhouse',
              'db.operation.name': operation,
              'db.query.text': text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text,
              'cairn.clickhouse.query_id': queryId,
              'cairn.clickhouse.engine': system,
            },
          },
          () => method({ ...params, query_id: queryId }),
        );
      };
    },
  });
}
