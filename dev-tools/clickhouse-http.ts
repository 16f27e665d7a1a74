/**
 * # A ClickHouse HTTP endpoint over chDB (development only)
 *
 * Runs Cairn's production shape (separate api and projector processes talking to a ClickHouse
 * server over HTTP through `@clickhouse/client`) where no ClickHouse server can be installed. The
 * engine is real ClickHouse (chDB); only the transport is a stand-in. Never shipped: the image
 * copies apps, libs and sql only.
 *
 *   node --import tsx dev-tools/clickhouse-http.ts --port 8123 --data DIR [--user U --password P]
 *
 * prints `role=clickhouse url=http://127.0.0.1:N pid=…`, then `ready`; SIGTERM closes chDB and
 * exits. `--port 0` takes a free port. From code: `spawnClickHouseHttp` (clickhouse-http/spawn.ts,
 * a child process resolving with `{url, pid, stop()}`) or `serveClickHouseHttp`
 * (clickhouse-http/server.ts, in this process, which must then hold no chDB session of its own).
 *
 * ## What it speaks (the interface `@clickhouse/client` 1.x uses)
 * - The statement in the POST body or the `query` URL parameter; an insert's data in the body
 *   with its statement in the URL (`INSERT INTO t [(cols)] FORMAT <text format>` goes to chDB as
 *   bytes; any other shape is run as statement + body). GET runs read-only statements.
 * - `param_*` bound parameters, passed to the engine as the exact text the client sent (through
 *   `SET param_x = '…'`), so it parses them as a server does a URL parameter; a placeholder with
 *   no value is `UNKNOWN_QUERY_PARAMETER`. multipart/form-data fields too.
 * - Settings as URL parameters, for that statement only: chDB keeps `SET`s for the session, so
 *   each request starts from the settings the session opened with (see session-state.ts).
 *   HTTP-only ones (`enable_http_compression`, `wait_end_of_query`, `http_*`, …) are read here or
 *   ignored. `database` (and `X-ClickHouse-Database`), `default_format` (`X-ClickHouse-Format`),
 *   `query_id` (`X-ClickHouse-Query-Id`; generated when absent), `session_id` (accepted).
 * - Request compression (`Content-Encoding` gzip, deflate, br; zstd on Node 22.15+) and response
 *   compression (`enable_http_compression=1` + Accept-Encoding, a server's preference order).
 * - Headers: `X-ClickHouse-Summary`, `-Query-Id`, `-Format`, `-Timezone`, `-Exception-Code`,
 *   `-Exception-Tag`; errors as `Code: N. DB::Exception: … (NAME) (version …)` with the status
 *   ClickHouse gives each code (exceptions.ts). A server holds the first MiB of output before
 *   its headers, and so does this: a failure after that is written into the body as the
 *   exception block of ClickHouse 25.11+ and the connection is cut, which the client reports as
 *   the ClickHouseError it carries.
 * - `KILL QUERY WHERE query_id = '…' [SYNC|ASYNC|TEST]`, `/ping` → `Ok.`, basic auth,
 *   `X-ClickHouse-User`/`-Key` or `user`/`password` parameters (wrong → 516 AUTHENTICATION_FAILED).
 *
 * ## How it differs from a ClickHouse server (also in docs/operations.md)
 * - One statement at a time: requests queue (FIFO) for the one chDB session. A SELECT streams
 *   chunk by chunk (nothing holds a large answer whole), but a client that reads slowly holds
 *   the engine for everyone meanwhile. An insert's data is held whole in memory.
 * - KILL QUERY (and a client that disconnects or closes its answer) stops a queued statement
 *   before it starts and a streamed SELECT between two chunks; the chunk being computed runs to
 *   its end (a long aggregation is one chunk). DDL, inserts and `SHOW`/`DESCRIBE`/`EXPLAIN`
 *   (chDB runs them whole) cannot be interrupted: `cant_cancel`. `max_execution_time` is the
 *   engine's own, as on a server.
 * - Settings last one request, a `SET` or `USE` statement's included; `session_id` is accepted
 *   but no session is kept (no `SET` or temporary table carries to the next request).
 *   `wait_end_of_query` and `send_progress_in_http_headers` are ignored (no progress headers).
 * - `X-ClickHouse-Summary`: chDB reports what a statement returned, not what it read, so
 *   `read_rows`/`read_bytes` of a SELECT count its result; an insert's `written_rows` counts
 *   materialized views' rows too, as a server's does.
 * - No `system.query_log`, `system.processes` of these requests, users, roles, quotas or grants
 *   beyond the one user; no clusters (`ON CLUSTER`, Replicated*, Distributed over remote shards);
 *   no ClickHouse compressed transport (`compress`, `decompress`) or external data tables;
 *   response codecs Node lacks (lz4, snappy, xz, bz2) are answered uncompressed.
 */
import { parseArgs } from 'node:util';
import { serveClickHouseHttp } from './clickhouse-http/server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8123' },
    host: { type: 'string', default: '127.0.0.1' },
    data: { type: 'string' },
    user: { type: 'string' },
    password: { type: 'string' },
  },
});
if (!values.data) {
  process.stderr.write('usage: clickhouse-http.ts --data DIR [--port N] [--user U --password P]\n');
  process.exit(2);
}
const endpoint = await serveClickHouseHttp({
  dataDir: values.data,
  port: Number(values.port),
  host: values.host,
  user: values.user,
  password: values.password,
});
process.stdout.write(`role=clickhouse url=${endpoint.url} pid=${process.pid}\nready\n`);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  endpoint.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`closing failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
