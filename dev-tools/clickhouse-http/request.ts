import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { exception } from './exceptions.ts';
import type { Codec } from './response.ts';

/** One statement as the request asks for it, the way a server's HTTPHandler reads it. */
export interface StatementRequest {
  sql: string;
  /** An insert's data, when the statement came in the `query` parameter and the data in the body. */
  data: Buffer | undefined;
  queryId: string;
  /** Settings for this statement alone, as text. */
  settings: Map<string, string>;
  /** `param_*` values as the client sent them (escaped text). */
  params: Map<string, string>;
  database: string;
  defaultFormat: string | undefined;
  /** GET, or `readonly` ≥ 1: only statements that read. */
  readonly: boolean;
}

/** URL parameters a server reads itself rather than as settings (HTTPHandler.cpp). */
const RESERVED = new Set([
  'query',
  'query_id',
  'database',
  'default_format',
  'session_id',
  'session_timeout',
  'session_check',
  'close_session',
  'user',
  'password',
  'quota_key',
  'stacktrace',
  'role',
  'buffer_size',
  'wait_end_of_query',
  'compress',
  'decompress',
  'client_protocol_version',
  'readonly',
]);

/** Settings that shape only the HTTP exchange: read here, never sent to the engine. */
const HTTP_SETTINGS = new Set([
  'enable_http_compression',
  'http_zlib_compression_level',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'http_response_buffer_size',
  'http_wait_end_of_query',
  'http_write_exception_in_output_format',
  'http_native_compression_disable_checksumming_on_decompress',
  'add_http_cors_header',
  'cancel_http_readonly_queries_on_client_close',
]);

export function statementRequest(req: IncomingMessage, url: URL, body: Buffer): StatementRequest {
  const multipart = /^multipart\/form-data;\s*boundary="?([^";]+)"?/i.exec(
    req.headers['content-type'] ?? '',
  );
  const fields = [
    ...url.searchParams,
    ...(multipart ? formFields(body, multipart[1] as string) : []),
  ];
  const field = (name: string) => fields.findLast(([key]) => key === name)?.[1];
  const settings = new Map<string, string>();
  const params = new Map<string, string>();
  for (const [name, value] of fields) {
    if (name.startsWith('param_')) params.set(name.slice('param_'.length), value);
    else if (name && !RESERVED.has(name) && !HTTP_SETTINGS.has(name)) settings.set(name, value);
  }
  if (field('compress') === '1' || field('decompress') === '1') {
    throw exception(
      'NOT_IMPLEMENTED',
      "The stand-in does not speak ClickHouse's own compressed format (compress, decompress)",
    );
  }
  const query = field('query');
  const inBody = !multipart && body.length > 0;
  return {
    sql: query ?? (inBody ? body.toString() : ''),
    data: query !== undefined && inBody ? body : undefined,
    queryId: field('query_id') || header(req, 'x-clickhouse-query-id') || randomUUID(),
    settings,
    params,
    database: header(req, 'x-clickhouse-database') || field('database') || 'default',
    defaultFormat: header(req, 'x-clickhouse-format') || field('default_format') || undefined,
    readonly: req.method === 'GET' || Number(field('readonly') ?? 0) > 0,
  };
}

/** How the answer is compressed: `enable_http_compression=1` and a codec the client accepts. */
export function responseCompression(
  req: IncomingMessage,
  url: URL,
): { codec: Codec | undefined; level: number } {
  const asked = url.searchParams.get('enable_http_compression') === '1';
  return {
    codec: asked ? chooseCodec(header(req, 'accept-encoding') ?? '') : undefined,
    level: Number(url.searchParams.get('http_zlib_compression_level') ?? 3),
  };
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const zstd = typeof (zlib as { createZstdCompress?: unknown }).createZstdCompress === 'function';

/** A server's preference order (chooseHTTPCompressionMethod), among the codecs Node has. */
function chooseCodec(accepted: string): Codec | undefined {
  const order: Codec[] = [...(zstd ? ['zstd' as const] : []), 'br', 'gzip', 'deflate'];
  return order.find((codec) => accepted.includes(codec));
}

/** The plain fields of a multipart/form-data body (`@clickhouse/client`'s multipart params). */
function formFields(body: Buffer, boundary: string): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  for (const part of body.toString().split(`--${boundary}`)) {
    const split = part.indexOf('\r\n\r\n');
    const name = /name="([^"]*)"/.exec(part.slice(0, split))?.[1];
    if (split < 0 || name === undefined) continue;
    fields.push([name, part.slice(split + 4).replace(/\r\n$/, '')]);
  }
  return fields;
}

/** The request body, decompressed as `Content-Encoding` says. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const encoding = (header(req, 'content-encoding') ?? '').trim().toLowerCase();
  const decompressors: Record<string, () => NodeJS.ReadWriteStream> = {
    gzip: () => zlib.createGunzip(),
    deflate: () => zlib.createInflate(),
    br: () => zlib.createBrotliDecompress(),
    ...(zstd
      ? {
          zstd: () =>
            (
              zlib as unknown as { createZstdDecompress(): NodeJS.ReadWriteStream }
            ).createZstdDecompress(),
        }
      : {}),
  };
  const decompressor = decompressors[encoding];
  if (!decompressor && encoding !== '' && encoding !== 'identity' && encoding !== 'none') {
    throw exception(
      'BAD_ARGUMENTS',
      `Unknown compression method '${encoding}'. Only ${Object.keys(decompressors).join(', ')} are supported by the stand-in`,
    );
  }
  const source: Readable = decompressor ? (req.pipe(decompressor()) as unknown as Readable) : req;
  if (decompressor) req.on('error', (error) => source.destroy(error));
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of source) chunks.push(chunk as Buffer);
  } catch (error) {
    if (!decompressor) throw error;
    throw exception('ZLIB_INFLATE_FAILED', `inflate failed: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks);
}
