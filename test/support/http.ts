import type { IncomingHttpHeaders } from 'node:http';
import zlib from 'node:zlib';
import type { HttpResult } from './http-result.ts';
import { validatorFor } from './live-documents.ts';

export type { HttpResult } from './http-result.ts';

/** Reads a fetch answer whole, its body parsed when it is JSON. */
export async function readAnswer(response: Response): Promise<HttpResult> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * Throws (failing the test that asked) unless `res`, answered by the server at `baseUrl` to
 * `method` on `path`, is an answer that server's own `/openapi.json` documents.
 */
export async function expectDocumentedAnswer(
  baseUrl: string,
  method: string,
  path: string,
  res: HttpResult,
): Promise<HttpResult> {
  (await validatorFor(baseUrl)).expectAnswerDocumented(method, path, res);
  return res;
}

/**
 * `expectDocumentedAnswer` for an answer read with node:http (the bytes as sent, compressed
 * or not), for tests that must see the wire.
 */
export async function expectDocumentedWire(
  baseUrl: string,
  method: string,
  path: string,
  wire: { status: number; headers: IncomingHttpHeaders; bytes: Buffer },
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(wire.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const encoding = headers.get('content-encoding');
  const bytes =
    encoding === 'br'
      ? zlib.brotliDecompressSync(wire.bytes)
      : encoding === 'gzip'
        ? zlib.gunzipSync(wire.bytes)
        : wire.bytes;
  const response = new Response(
    method === 'HEAD' || wire.status === 204 || wire.status === 304 ? null : bytes,
    {
      status: wire.status,
      headers,
    },
  );
  await expectDocumentedAnswer(baseUrl, method, path, await readAnswer(response));
}

/**
 * A real HTTP request against a started server, body parsed when it is JSON, and the answer
 * checked against the server's own OpenAPI document (see `expectDocumentedAnswer`).
 */
export async function http(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Uint8Array | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  // Asked before the request, so that a request which stops the server is still checked.
  await validatorFor(baseUrl);
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  return expectDocumentedAnswer(baseUrl, method, path, await readAnswer(response));
}
