import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { authenticate, type User } from './auth.ts';
import { Engine } from './engine.ts';
import { exception, fromEngine } from './exceptions.ts';
import {
  readBody,
  responseCompression,
  type StatementRequest,
  statementRequest,
} from './request.ts';
import { Output } from './response.ts';
import { type KillQuery, parseKillQuery } from './sql-scan.ts';
import { runStatement } from './statement.ts';

export interface EndpointOptions {
  /** chDB's data directory (one per process). */
  dataDir: string;
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  /** The one user requests must name; default `default` with no password. */
  user?: string;
  password?: string;
}

export interface Endpoint {
  url: string;
  /** Stops taking requests, lets the queue finish (streams are cancelled), closes chDB. */
  close(): Promise<void>;
}

/** Opens chDB in `dataDir` and serves ClickHouse's HTTP interface over it in this process. */
export async function serveClickHouseHttp(options: EndpointOptions): Promise<Endpoint> {
  const engine = await Engine.open(options.dataDir);
  const user: User = { name: options.user ?? 'default', password: options.password ?? '' };
  const server = http.createServer((req, res) => {
    void handle(engine, user, req, res);
  });
  // A server keeps idle connections 10 s (keep_alive_timeout); the client's sockets expire first.
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await engine.close();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

async function handle(
  engine: Engine,
  user: User,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://stand-in');
  const plain = (status: number, text: string) => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=UTF-8' }).end(text);
  };
  if (
    url.pathname === '/ping' ||
    (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))
  ) {
    plain(200, 'Ok.\n');
    return;
  }
  if (url.pathname !== '/') {
    plain(404, `There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\n`);
    return;
  }
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const output = new Output(res, {
    version: engine.version,
    timezone: engine.timezone,
    ...responseCompression(req, url),
  });
  try {
    const name = authenticate(req, url, user);
    const request = statementRequest(req, url, await readBody(req));
    const kill = parseKillQuery(request.sql, request.params);
    if (kill === null) {
      throw exception(
        'NOT_IMPLEMENTED',
        "The stand-in's KILL QUERY takes only WHERE query_id = '…' [SYNC|ASYNC|TEST]",
      );
    }
    if (kill) await killQuery(engine, kill, request, output);
    else await runStatement(engine, request, name, output, gone.signal);
  } catch (error) {
    try {
      output.fail(fromEngine(error));
    } catch {
      res.destroy();
    }
  }
}

/** KILL QUERY, answered at once rather than queued behind the statement it stops. */
async function killQuery(
  engine: Engine,
  kill: KillQuery,
  request: StatementRequest,
  output: Output,
): Promise<void> {
  const killed = await engine.kill(kill.queryId, kill.mode);
  const format = kill.format ?? request.defaultFormat ?? 'TabSeparated';
  const rows = killed.map(({ job, status }) => ({
    kill_status: status,
    query_id: job.queryId,
    user: job.user,
    query: job.query,
  }));
  output.header('X-ClickHouse-Query-Id', request.queryId);
  output.header('X-ClickHouse-Format', format);
  const text = killAnswer(rows, format);
  const summary = { read_rows: rows.length, read_bytes: 0, written_rows: 0, written_bytes: 0 };
  if (text)
    await output.write(Buffer.from(text), rows.length, new AbortController().signal, summary);
  output.end(summary);
}

function killAnswer(rows: Array<Record<string, string>>, format: string): string {
  if (/^JSONEachRow$/i.test(format)) return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
  if (!/^(TSV|TabSeparated)/i.test(format)) {
    throw exception(
      'NOT_IMPLEMENTED',
      'The stand-in answers KILL QUERY in TabSeparated or JSONEachRow',
    );
  }
  const tsv = (value: string) =>
    value.replace(/[\\\t\n]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n' })[c] as string);
  const names = /WithNames/i.test(format) ? `kill_status\tquery_id\tuser\tquery\n` : '';
  return names + rows.map((row) => `${Object.values(row).map(tsv).join('\t')}\n`).join('');
}
