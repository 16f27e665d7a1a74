import { Readable } from 'node:stream';
import type { ClickHouseSettings } from '@clickhouse/client';
import { noneLabel } from './catalog/catalog.ts';
import { countedRows } from './compile/counted-rows.ts';
import type { QueryTicket } from './execute/admission.ts';
import { countLines, fileLines } from './export-engine-file.ts';
import {
  CONTENT_TYPES,
  ENGINE_READINGS,
  EXTENSIONS,
  type ExportFormat,
  type LineEncoder,
  type NoneLabels,
  rowEncoder,
} from './export-format.ts';
import { ExportSpool, spoolFault } from './export-spool.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import { type AnalyticsDeps, prepareQuery, type QueryContext, runQuery } from './query.service.ts';
import type { PreparedQuery } from './query-parts.ts';
import { type QueryWarning, queryWarnings } from './shape/query-metadata.ts';

/** A query's rows as a file, sent at its reader's pace from a spool. */
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
 * rather than the answer's. Rows read straight from the engine (a breakdown) wait in a spool,
 * which the caller then reads at its own pace: on chDB the engine writes them there itself and
 * they are encoded as they are read, over HTTP they are encoded into it as they arrive; a
 * series (zero-filled, bounded by its buckets) and a comparison (which pairs the rows of two
 * periods) are bounded answers, encoded from the ordinary answer. Everything that can fail,
 * for a reason of the request or of the engine, fails before the returned stream starts, so it
 * keeps its JSON shape; warnings are known by then and travel in `Cairn-Warnings`.
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
    reading: { watermark: freshness.watermark, changes: freshness.changes ?? null },
  });
  const { query } = plan;
  const headers = (warnings: QueryWarning[] = []) => ({
    'Content-Type': CONTENT_TYPES[format],
    'Content-Disposition': `attachment; filename="cairn-query-${now.toISOString().slice(0, 10)}.${EXTENSIONS[format]}"`,
    ...(warnings.length > 0
      ? { 'Cairn-Warnings': warnings.map((warning) => warning.code).join(', ') }
      : {}),
  });

  const principal = ctx.principal ?? 'anonymous';
  const release = deps.exportGate?.enter(principal) ?? (() => {});
  try {
    if (plan.series || plan.comparison) {
      const answer = await runQuery(deps, request, ctx);
      const encoder = rowEncoder(format, query, deps.csvFormulaEscape ?? true);
      const stream = Readable.from(encodeRows(answer.data, encoder));
      stream.once('close', release);
      return { stream, headers: headers(answer.warnings) };
    }
    const spooled = deps.exportSpool?.engineWrites
      ? await engineRows(deps, plan, ctx, format, deps.exportSpool)
      : await spoolRows(deps, plan, ctx, format);
    const warnings = queryWarnings({
      query,
      period: plan.period,
      rowCount: Math.min(spooled.total ?? 0, cap),
      totalRows: spooled.total ?? 0,
      capped: spooled.total !== null && spooled.total > cap,
      // The engine throws at the budget here ('throw'): an export is whole or visibly cut.
      partial: false,
      timeoutMs: deps.timeoutMs,
      freshness,
      staleAfterMs: deps.staleAfterMs,
    });
    const { stream } = spooled;
    stream.once('close', release);
    return { stream, headers: headers(warnings) };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * Runs the rows statement and writes its encoded rows to a spool while the query holds its
 * admission; the admission (and on chDB the engine) is given back as soon as the engine has
 * answered, whatever pace the caller then reads the file at.
 */
async function spoolRows(
  deps: AnalyticsDeps,
  plan: PreparedQuery,
  ctx: QueryContext,
  format: ExportFormat,
): Promise<SpooledRows> {
  const { query } = plan;
  const reading = ENGINE_READINGS[format];
  const counted = isCounted(deps, query);
  const statement = counted ? countedRows(plan.rows, TOTAL) : plan.rows;
  const file = (deps.exportSpool ?? MEMORY_SPOOL).open();
  const run = admitted(deps, ctx);
  try {
    const total = await run.ticket.run(async (budgetMs) => {
      const result = await deps.clickhouse.query({
        query: statement.sql,
        query_params: statement.params,
        format: reading.format,
        abort_signal: ctx.signal,
        clickhouse_settings: exportSettings(deps, budgetMs),
      });
      try {
        const batches = result.stream()[Symbol.asyncIterator]() as AsyncIterator<Line[]>;
        const { encoder, pending } = await readHead(batches, format, query, deps);
        for await (const chunk of encodeStream(pending, batches, encoder, rowLimit(deps, query))) {
          await file.write(chunk);
        }
        // The count is the last column (countedRows), read off the first row.
        const first = pending[0]?.text;
        return counted ? Number(first === undefined ? 0 : reading.last(first)) : null;
      } finally {
        result.close();
      }
    });
    return { stream: file.reader(), total };
  } catch (error) {
    await file.discard();
    throw error;
  } finally {
    run.close();
  }
}

/**
 * Runs the rows statement with the embedded engine writing its output into a spool file
 * itself, then reads that file at the caller's pace: the output never sits in this process's
 * memory whole, and the admission (and the engine) is given back once the statement ends. The
 * statement stops one row past the cap, so the file's lines are the count the warnings need.
 */
async function engineRows(
  deps: AnalyticsDeps,
  plan: PreparedQuery,
  ctx: QueryContext,
  format: ExportFormat,
  spool: ExportSpool,
): Promise<SpooledRows> {
  const reading = ENGINE_READINGS[format];
  const file = await spool.engineFile();
  const run = admitted(deps, ctx);
  try {
    // No abort signal: chDB cannot stop a statement, and a call it gave up on early would let
    // the engine go on to create the file after its discard, left on disk until the next start.
    await run.ticket.run((budgetMs) =>
      deps.clickhouse.command({
        query: `${plan.rows.sql}\n${file.clause(reading.format)}`,
        query_params: plan.rows.params,
        clickhouse_settings: exportSettings(deps, budgetMs),
      }),
    );
    ctx.signal?.throwIfAborted();
  } catch (error) {
    await file.discard();
    throw error;
  } finally {
    run.close();
  }
  const handle = await file.open().catch((error: unknown) => {
    throw spoolFault(error);
  });
  try {
    const { query } = plan;
    // The first line names the columns.
    const total = isCounted(deps, query) ? Math.max((await countLines(handle)) - 1, 0) : null;
    const lines = fileLines(handle);
    const { encoder, pending } = await readHead(lines, format, query, deps);
    const stream = Readable.from(encodeStream(pending, lines, encoder, rowLimit(deps, query)));
    stream.once('close', () => {
      void lines.return(undefined).finally(() => handle.close());
    });
    return { stream, total };
  } catch (error) {
    await handle.close();
    throw spoolFault(error);
  }
}

/** An export's encoded rows, ready for its reader, and how many rows the statement gave. */
interface SpooledRows {
  stream: Readable;
  /** Null when the caller's own limit is within the cap (nothing to count). */
  total: number | null;
}

/** A caller's own limit within the cap is a choice, not a truncation: nothing to count. */
const isCounted = (deps: AnalyticsDeps, query: PreparedQuery['query']): boolean =>
  query.limit === null || query.limit > (deps.exportMaxRows ?? deps.maxRows);

/** The rows an export writes: the caller's limit, never past the cap. */
const rowLimit = (deps: AnalyticsDeps, query: PreparedQuery['query']): number =>
  Math.min(query.limit ?? deps.exportMaxRows ?? deps.maxRows, deps.exportMaxRows ?? deps.maxRows);

/**
 * The column names (the engine's first line) and the first rows after them, with the encoder
 * of the rest; `pending` holds the first row, which the spooled statement's count rides on.
 */
async function readHead(
  batches: AsyncIterator<Line[]>,
  format: ExportFormat,
  query: PreparedQuery['query'],
  deps: AnalyticsDeps,
): Promise<{ encoder: LineEncoder; pending: Line[] }> {
  const reading = ENGINE_READINGS[format];
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
  const none: NoneLabels = query.dimensions.flatMap((name) => {
    const stored = noneLabel(name);
    return stored === undefined ? [] : [[(names as string[]).indexOf(name), stored] as const];
  });
  return { encoder: reading.encoder(names, TOTAL, none, deps.csvFormulaEscape ?? true), pending };
}

/** Without a spool directory (a library caller), the output waits in memory. */
const MEMORY_SPOOL = new ExportSpool('', { memoryBytes: Number.POSITIVE_INFINITY });

/** The query's admission, held until the engine has answered; none for callers without one. */
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
