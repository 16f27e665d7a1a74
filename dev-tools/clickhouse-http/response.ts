import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Transform, Writable } from 'node:stream';
import zlib from 'node:zlib';
import type { ClickHouseException } from './exceptions.ts';

/** What the response says of a statement in `X-ClickHouse-Summary` (counts as decimal strings). */
export interface Summary {
  read_rows: number;
  read_bytes: number;
  written_rows: number;
  written_bytes: number;
}

export type Codec = 'gzip' | 'deflate' | 'br' | 'zstd';

export interface OutputOptions {
  version: string;
  timezone: string;
  /** Response compression the request asked for (`enable_http_compression=1` + Accept-Encoding). */
  codec: Codec | undefined;
  level: number;
}

/** A server holds this much output before it sends the headers (DBMS_DEFAULT_BUFFER_SIZE). */
const HELD_BYTES = 1 << 20;
const EXCEPTION_MARKER = '__exception__';
/** A server cuts the message of an exception sent after the headers at 16 KiB. */
const MAX_EXCEPTION_BYTES = 16 * 1024 - 70;

/**
 * One response as a server writes it: the first MiB of output is held, so a statement that fails
 * before then answers with its own status; past it the headers go (the summary then counts what
 * was done so far), and a failure after that is written into the body as the exception block
 * ClickHouse 25.11+ sends (`X-ClickHouse-Exception-Tag`), then the connection is cut before the
 * response ends, as a server does.
 */
export class Output {
  readonly #res: ServerResponse;
  readonly #options: OutputOptions;
  readonly #tag = randomBytes(8).toString('hex');
  readonly #started = process.hrtime.bigint();
  readonly #headers = new Map<string, string>();
  #held: Buffer[] = [];
  #heldBytes = 0;
  #sink: Writable | undefined;
  #resultRows = 0;
  #resultBytes = 0;

  constructor(res: ServerResponse, options: OutputOptions) {
    this.#res = res;
    this.#options = options;
    this.header('X-ClickHouse-Server-Display-Name', 'clickhouse-http-stand-in');
    this.header('X-ClickHouse-Timezone', options.timezone);
    this.header('Content-Type', 'text/plain; charset=UTF-8');
  }

  /** Sets a header the response will carry (only before the headers are sent). */
  header(name: string, value: string): void {
    this.#headers.set(name, value);
  }

  get committed(): boolean {
    return this.#sink !== undefined;
  }

  /** Whether the client is gone: nothing written now reaches anyone. */
  get gone(): boolean {
    return this.#res.destroyed || this.#res.writableEnded;
  }

  /** Writes result bytes; resolves once the client can take more (or is gone, or `signal`). */
  async write(chunk: Buffer, rows: number, signal: AbortSignal, summary: Summary): Promise<void> {
    this.#resultRows += rows;
    this.#resultBytes += chunk.length;
    let sink = this.#sink;
    let flowing: boolean;
    if (sink) {
      flowing = sink.write(chunk);
    } else {
      this.#held.push(chunk);
      this.#heldBytes += chunk.length;
      if (this.#heldBytes < HELD_BYTES) return;
      sink = this.#commit(summary);
      flowing = !sink.writableNeedDrain;
    }
    // An abort that came before the wait would never wake it: the statement is stopping anyway.
    if (flowing || this.gone || signal.aborted) return;
    const waiting = sink;
    await new Promise<void>((resolve) => {
      const done = () => {
        waiting.removeListener('drain', done);
        this.#res.removeListener('close', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      waiting.once('drain', done);
      this.#res.once('close', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Ends a successful response. */
  end(summary: Summary): void {
    if (this.gone) return;
    (this.#sink ?? this.#commit(summary)).end();
  }

  /** Answers `error`: with its status while nothing is sent yet, else inside the body. */
  fail(error: ClickHouseException): void {
    if (this.gone) return;
    const text = error.text(this.#options.version);
    if (!this.#sink) {
      this.#held = [];
      this.#heldBytes = 0;
      this.header('X-ClickHouse-Exception-Code', String(error.code));
      this.#res.statusCode = error.status;
      if (error.type === 'REQUIRED_PASSWORD') {
        this.header('WWW-Authenticate', 'Basic realm="ClickHouse server HTTP API"');
      }
      this.#commit(undefined).end(`${text}\n`);
      return;
    }
    const message = Buffer.from(text.endsWith('\n') ? text : `${text}\n`).subarray(
      0,
      MAX_EXCEPTION_BYTES,
    );
    const block = Buffer.concat([
      Buffer.from(`\r\n${EXCEPTION_MARKER}\r\n${this.#tag}\r\n`),
      message,
      Buffer.from(`${message.length} ${this.#tag}\r\n${EXCEPTION_MARKER}\r\n`),
    ]);
    const res = this.#res;
    // The response is never ended: the client sees it cut short, as a server leaves it.
    const cut = () => setImmediate(() => res.socket?.end());
    const sink = this.#sink;
    if (sink === res) {
      res.write(block, cut);
      return;
    }
    const compressor = sink as Compressor;
    compressor.write(block);
    compressor.flush(() => {
      compressor.unpipe(res);
      for (let data = compressor.read(); data !== null; data = compressor.read()) res.write(data);
      cut();
    });
  }

  /** Sends the headers and what was held; returns where the body goes on. */
  #commit(summary: Summary | undefined): Writable {
    const res = this.#res;
    for (const [name, value] of this.#headers) res.setHeader(name, value);
    res.setHeader('X-ClickHouse-Exception-Tag', this.#tag);
    res.setHeader('X-ClickHouse-Summary', JSON.stringify(this.#summary(summary)));
    const codec = this.#options.codec;
    if (codec) {
      res.setHeader('Content-Encoding', codec);
      const compressor = compressorFor(codec, this.#options.level);
      compressor.pipe(res);
      this.#sink = compressor;
    } else {
      this.#sink = res;
    }
    const sink = this.#sink;
    for (const chunk of this.#held) sink.write(chunk);
    this.#held = [];
    return sink;
  }

  #summary(summary: Summary | undefined) {
    const figures = {
      read_rows: summary?.read_rows ?? 0,
      read_bytes: summary?.read_bytes ?? 0,
      written_rows: summary?.written_rows ?? 0,
      written_bytes: summary?.written_bytes ?? 0,
      total_rows_to_read: 0,
      result_rows: this.#resultRows,
      result_bytes: this.#resultBytes,
      elapsed_ns: Number(process.hrtime.bigint() - this.#started),
      memory_usage: 0,
    };
    return Object.fromEntries(Object.entries(figures).map(([key, value]) => [key, String(value)]));
  }
}

type Compressor = zlib.Zlib & Transform;

function compressorFor(codec: Codec, level: number): Compressor {
  const create = {
    gzip: () => zlib.createGzip({ level }),
    deflate: () => zlib.createDeflate({ level }),
    br: () => zlib.createBrotliCompress(),
    // Node 22.15+ only; the request parser offers zstd only where it exists.
    zstd: () => (zlib as unknown as { createZstdCompress(): Compressor }).createZstdCompress(),
  }[codec];
  return create() as unknown as Compressor;
}
