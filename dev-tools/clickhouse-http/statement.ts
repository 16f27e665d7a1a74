import type { Session } from 'chdb';
import { type Engine, type Job, wasCancelled } from './engine.ts';
import { exception } from './exceptions.ts';
import type { StatementRequest } from './request.ts';
import type { Output, Summary } from './response.ts';
import { parsePlainInsert, type ScannedSql, scanSql } from './sql-scan.ts';

/** Statements a read-only request may run (a server's `readonly` and GET). */
const READING = new Set(['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC', 'EXPLAIN', 'EXISTS']);

/**
 * Runs one request's statement on the engine and writes its answer: a SELECT streamed chunk by
 * chunk (chDB's queryStream), an insert's data handed to chDB as bytes, anything else run
 * whole. Throws what the statement failed with; the caller answers it.
 */
export async function runStatement(
  engine: Engine,
  request: StatementRequest,
  user: string,
  output: Output,
  clientGone: AbortSignal,
): Promise<void> {
  const insert = request.data && parsePlainInsert(request.sql);
  const sql = insert ? request.sql : request.sql + (request.data?.toString() ?? '');
  const scanned = scanSql(sql);
  check(sql, scanned, request);
  const format = scanned.format ?? request.defaultFormat ?? 'TabSeparated';
  output.header('X-ClickHouse-Query-Id', request.queryId);
  if (READING.has(scanned.keyword)) {
    output.header('X-ClickHouse-Format', format);
    output.header('Content-Type', contentType(format));
  }
  const spec = { queryId: request.queryId, user, query: sql, signal: clientGone };
  await engine.exclusive(spec, async (session, job) => {
    await engine.state.enter(session, request.settings, request.params, request.database);
    try {
      if (insert) {
        const data = request.data as Buffer;
        const written = await session.insert({ ...insert, values: data.subarray(dataStart(data)) });
        output.end({
          read_rows: written.rowsSent ?? written.rowsWritten,
          read_bytes: written.bytesSent,
          written_rows: written.rowsWritten,
          written_bytes: written.bytesWritten,
        });
      } else {
        await streamOrRun({ session, sql, format, job, output });
      }
    } finally {
      if (scanned.keyword === 'SET' || scanned.keyword === 'USE') engine.state.touched();
    }
  });
}

function check(sql: string, scanned: ScannedSql, request: StatementRequest): void {
  if (!scanned.keyword) throw exception('SYNTAX_ERROR', 'Empty query');
  if (scanned.secondStatementAt !== undefined) {
    const at = scanned.secondStatementAt;
    throw exception(
      'SYNTAX_ERROR',
      `Syntax error (Multi-statements are not allowed): failed at position ${at + 1} (end of query): ${sql.slice(at)}. `,
    );
  }
  for (const name of scanned.placeholders.keys()) {
    if (!request.params.has(name)) {
      throw exception('UNKNOWN_QUERY_PARAMETER', `Substitution \`${name}\` is not set`);
    }
  }
  if (request.readonly && !READING.has(scanned.keyword) && scanned.keyword !== 'SET') {
    throw exception(
      'READONLY',
      'Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries',
    );
  }
}

/** Where an insert's data starts: after spaces and one line break, as a server's parser reads it. */
function dataStart(data: Buffer): number {
  let at = 0;
  while (at < data.length && (data[at] === 0x20 || data[at] === 0x09 || data[at] === 0x0c)) at += 1;
  if (data[at] === 0x0d) at += 1;
  if (data[at] === 0x0a) at += 1;
  return at;
}

/** A statement on its way to the engine, with where its answer goes. */
interface Run {
  session: Session;
  sql: string;
  format: string;
  job: Job;
  output: Output;
}

async function streamOrRun(run: Run): Promise<void> {
  const { session, sql, format, job, output } = run;
  const summary: Summary = { read_rows: 0, read_bytes: 0, written_rows: 0, written_bytes: 0 };
  let stream: ReturnType<Session['queryStream']>;
  try {
    stream = session.queryStream(sql, { format, signal: job.signal });
  } catch (error) {
    // chDB streams SELECTs only; it says so before running anything.
    if (!/Streaming query is not supported/.test(String((error as Error).message))) throw error;
    await runWhole(run);
    return;
  }
  job.interruptible = true;
  try {
    for await (const chunk of stream) {
      // chDB counts a statement's result as what it read (its queryAsync does the same).
      summary.read_rows += chunk.numRows;
      summary.read_bytes += chunk.numBytes;
      const raw = chunk.raw();
      const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
      await output.write(bytes, chunk.numRows, job.signal, summary);
    }
  } catch (error) {
    throw job.signal.aborted ? wasCancelled() : error;
  } finally {
    stream.cancel();
  }
  if (job.signal.aborted) throw wasCancelled();
  output.end(summary);
}

async function runWhole({ session, sql, format, job, output }: Run): Promise<void> {
  let result: Awaited<ReturnType<Session['queryAsync']>>;
  try {
    result = await session.queryAsync(sql, { format });
  } catch (error) {
    await flushOutput(session);
    throw error;
  }
  const bytes = result.bytes();
  const summary = {
    read_rows: result.rowsRead,
    read_bytes: result.bytesRead,
    written_rows: 0,
    written_bytes: 0,
  };
  if (bytes.length > 0) {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    await output.write(buffer, result.rowsRead, job.signal, summary);
  }
  output.end(summary);
}

/**
 * A statement that fails after chDB has started writing its output leaves that output in the
 * session, glued in front of the next answer; one throwaway statement carries it off (as
 * libs/storage/clickhouse.ts does in process).
 */
async function flushOutput(session: Session): Promise<void> {
  await session.queryAsync('SELECT 1', { format: 'TabSeparated' }).catch(() => {});
}

function contentType(format: string): string {
  if (/^(JSON|NDJSON)/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^(TSV|TabSeparated)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^CSV/i.test(format)) {
    return `text/csv; charset=UTF-8; header=${/WithNames/i.test(format) ? 'present' : 'absent'}`;
  }
  if (/^(Native|RowBinary|Parquet|Arrow|ORC|Avro|Protobuf|MsgPack)/i.test(format)) {
    return 'application/octet-stream';
  }
  return 'text/plain; charset=UTF-8';
}
