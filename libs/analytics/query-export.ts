import { Readable } from 'node:stream';
import type { ClickHouseSettings } from '@clickhouse/client';
import { noneLabel } from './catalog/catalog.ts';
import type { CompiledQuery } from './compile/query-compiler.ts';
import type { QueryTicket } from './execute/admission.ts';
import {
  CONTENT_TYPES,
  ENGINE_READINGS,
  EXTENSIONS,
  type ExportFormat,
  type LineEncoder,
  type NoneLabels,
  rowEncoder,
} from './export-format.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import { type AnalyticsDeps, prepareQuery, type QueryContext, runQuery } from './query.service.ts';
import { type QueryWarning, queryWarnings } from './shape/query-metadata.ts';

/** A query's rows as a file: sent as they are read, never held whole. */
export interface QueryExport {
  stream: Readable;
  headers: Record<string, string>;
}

/** One line of the engine's answer. */
type Line = { text: string };

/** Rows encoded per chunk written: one write per row would cost more than the encoding. */
const ROWS_PER_CHUNK = 1_000;

/**
 * A query's data rows as CSV or NDJSON, under the export row cap (`CAIRN_EXPORT_MAX_ROWS`)
 * rather than the answer's. Rows read straight from the engine (a breakdown) stream from it
 * row by row; a series (zero-filled, bounded by its buckets) and a comparison (which pairs the
 * rows of two periods) are bounded answers, encoded from the ordinary answer. Everything that
 * can fail for a reason of the request fails before the returned stream starts, so it keeps
 * its JSON shape; warnings are known by then and travel in `Cairn-Warnings`.
 */
export async function exportQuery(
  deps: AnalyticsDeps,
  request: QueryRequest,
  ctx: QueryContext,
  format: ExportFormat,
): Promise<QueryExport> {
  const cap = deps.exportMaxRows ?? deps.maxRows;
  const now = deps.now();
  const freshness = await deps.freshness(now);
  // One row past the cap is asked for, to tell a result the cap cut from one that fits it; a
  // caller's limit is still checked against the answer's cap, as the schema checked it.
  const maxRows = Math.max(cap + 1, deps.maxRows);
  const plan = await prepareQuery({ ...deps, maxRows }, request, ctx.businesses, now, {
    watermark: freshness.watermark,
  });
  const { query } = plan;
  const headers = (warnings: QueryWarning[] = []) => ({
    'Content-Type': CONTENT_TYPES[format],
    'Content-Disposition': `attachment; filename="cairn-query-${now.toISOString().slice(0, 10)}.${EXTENSIONS[format]}"`,
    ...(warnings.length > 0
      ? { 'Cairn-Warnings': warnings.map((warning) => warning.code).join(', ') }
      : {}),
  });

  if (plan.series || plan.comparison) {
    const answer = await runQuery(deps, request, ctx);
    return {
      stream: Readable.from(encodeRows(answer.data, rowEncoder(format, query))),
      headers: headers(answer.warnings),
    };
  }

  const reading = ENGINE_READINGS[format];
  const run = admitted(deps, ctx);
  try {
    // A caller's own limit within the cap is a choice, not a truncation: nothing to count.
    const counted = query.limit === null || query.limit > cap;
    const statement = counted ? withTotal(plan.rows) : plan.rows;
    const result = await run.ticket.run((budgetMs) =>
      deps.clickhouse.query({
        query: statement.sql,
        query_params: statement.params,
        format: reading.format,
        abort_signal: ctx.signal,
        clickhouse_settings: exportSettings(deps, budgetMs),
      }),
    );
    const batches = result.stream()[Symbol.asyncIterator]() as AsyncIterator<Line[]>;
    // The column names, then the first rows: the first carries the total the headers need.
    let names: string[] | undefined;
    let pending: Line[] = [];
    while (names === undefined || pending.length === 0) {
      const next = await batches.next();
      if (next.done) break;
      let lines = next.value;
      if (names === undefined && lines.length > 0) {
        names = reading.names((lines[0] as Line).text);
        lines = lines.slice(1);
      }
      pending = lines;
    }
    if (names === undefined) throw new Error('the engine answered no column names');
    // The count is the last column (withTotal), read off the first row.
    const first = pending[0]?.text;
    const total = counted ? Number(first === undefined ? 0 : reading.last(first)) : null;
    const warnings = queryWarnings({
      query,
      period: plan.period,
      rowCount: Math.min(total ?? 0, cap),
      totalRows: total ?? 0,
      capped: total !== null && total > cap,
      // The engine throws at the budget here ('throw'): an export is whole or visibly cut.
      partial: false,
      timeoutMs: deps.timeoutMs,
      freshness,
      staleAfterMs: deps.staleAfterMs,
    });
    const none: NoneLabels = query.dimensions.flatMap((name) => {
      const stored = noneLabel(name);
      return stored === undefined ? [] : [[(names as string[]).indexOf(name), stored] as const];
    });
    const stream = Readable.from(
      encodeStream(
        pending,
        batches,
        reading.encoder(names, TOTAL, none),
        Math.min(query.limit ?? cap, cap),
      ),
    );
    stream.once('close', () => {
      result.close();
      run.close();
    });
    return { stream, headers: headers(warnings) };
  } catch (error) {
    run.close();
    throw error;
  }
}

/** The query's admission, held until its rows are sent; none for callers without one. */
function admitted(deps: AnalyticsDeps, ctx: QueryContext): { ticket: QueryTicket; close(): void } {
  const ticket: QueryTicket = deps.admission
    ? deps.admission.ticket(ctx.principal ?? 'anonymous', ctx.signal, deps.timeoutMs)
    : { run: (work) => work(deps.timeoutMs), close: () => {} };
  let closed = false;
  return {
    ticket,
    close() {
      if (!closed) ticket.close();
      closed = true;
    },
  };
}

/**
 * The engine stops an export at its time budget with an error rather than quietly ('break'
 * would end a file early with nothing to say so), and on a server stops the statement when the
 * export's connection closes.
 */
function exportSettings(deps: AnalyticsDeps, budgetMs: number): ClickHouseSettings {
  return {
    max_execution_time: Math.max(budgetMs, 1) / 1000,
    timeout_overflow_mode: 'throw',
    cancel_http_readonly_queries_on_client_close: 1,
    ...(deps.maxMemoryBytes ? { max_memory_usage: String(deps.maxMemoryBytes) } : {}),
  };
}

/** The column that carries the statement's row count on every row; never exported. */
const TOTAL = '__cairn_export_total';

/**
 * The statement with its row count (up to its limit, one past the export cap) on every row,
 * so the count is known from the first row and the rows are read once. The window has neither
 * partition nor order, so the rows keep the statement's order; its own SETTINGS clause stays
 * last, outside the subquery.
 */
function withTotal(statement: CompiledQuery): CompiledQuery {
  const lines = statement.sql.split('\n');
  const settings = lines.at(-1)?.startsWith('SETTINGS ') ? lines.pop() : undefined;
  const sql = `SELECT *, count() OVER () AS ${TOTAL} FROM (\n${lines.join('\n')}\n)${settings ? `\n${settings}` : ''}`;
  return { ...statement, sql };
}

async function* encodeRows(
  rows: Array<Record<string, unknown>>,
  encoder: ReturnType<typeof rowEncoder>,
): AsyncGenerator<string> {
  if (encoder.header) yield encoder.header;
  for (let at = 0; at < rows.length; at += ROWS_PER_CHUNK) {
    let chunk = '';
    for (const row of rows.slice(at, at + ROWS_PER_CHUNK)) chunk += encoder.row(row);
    yield chunk;
  }
}

/**
 * The engine's lines as they arrive, in chunks of a bounded number of rows however large the
 * engine's batches.
 */
async function* encodeStream(
  first: Line[],
  rest: AsyncIterator<Line[]>,
  encoder: LineEncoder,
  limit: number,
): AsyncGenerator<string> {
  if (encoder.header) yield encoder.header;
  let sent = 0;
  let batch: Line[] | undefined = first;
  while (batch && sent < limit) {
    for (let from = 0; from < batch.length && sent < limit; from += ROWS_PER_CHUNK) {
      let chunk = '';
      const to = Math.min(batch.length, from + ROWS_PER_CHUNK, from + limit - sent);
      for (let i = from; i < to; i++) chunk += encoder.line((batch[i] as Line).text);
      sent += to - from;
      yield chunk;
    }
    if (sent >= limit) return;
    const next = await rest.next();
    batch = next.done ? undefined : next.value;
  }
}
