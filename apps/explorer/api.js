const TOKEN_KEY = 'cairn.token';

/** The token lives in this tab's sessionStorage only: never in a URL, a cookie or a log. */
export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** A non-2xx answer, carrying the API's own words (problem+json or the 422 body). */
export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
  }

  /** The `{loc, msg, type}` issues of a validation failure, or none. */
  get issues() {
    return this.status === 422 && Array.isArray(this.body?.detail) ? this.body.detail : [];
  }
}

function describe(status, body) {
  if (Array.isArray(body?.detail)) {
    return body.detail.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; ');
  }
  if (body && typeof body.detail === 'string') {
    return body.title ? `${body.title}: ${body.detail}` : body.detail;
  }
  return `The server answered ${status}.`;
}

const authorized = () => ({
  Accept: 'application/json',
  Authorization: `Bearer ${token.get()}`,
});

/** The answer's JSON, or an ApiError for a non-2xx. */
async function readAnswer(response) {
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** One API call with the stored token; JSON in, JSON out, errors thrown as ApiError. */
export async function api(method, path, body) {
  const headers = authorized();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  return readAnswer(response);
}

/**
 * A GET that revalidates what the caller kept from the same URL (`{url, etag, body}`): it sends
 * `If-None-Match` with that ETag, and on a 304 gives the kept answer back, marked `reused`.
 * Otherwise the new answer, with its ETag to keep in turn. `signal` cancels it (an AbortError).
 */
export async function revalidate(path, kept, signal) {
  const headers = authorized();
  const held = kept?.url === path && kept.etag ? kept : null;
  if (held) headers['If-None-Match'] = held.etag;
  // The browser's own cache stays out of it: the page keeps the answer and asks itself.
  const response = await fetch(path, { headers, cache: 'no-store', signal });
  if (response.status === 304 && held) return { ...held, reused: true };
  const body = await readAnswer(response);
  return { url: path, etag: response.headers.get('ETag'), body, reused: false };
}

/**
 * The rows of a `GET /api/v1/query?q=…` as a CSV file from the export operation, saved by the
 * browser under the name the server gives in `Content-Disposition`.
 */
export async function downloadCsv(queryPath) {
  const path = queryPath.replace(/^\/api\/v1\/query\?/, '/api/v1/query/export?');
  const response = await fetch(path, {
    headers: { ...authorized(), Accept: 'text/csv' },
    cache: 'no-store',
  });
  if (!response.ok) await readAnswer(response);
  const disposition = response.headers.get('Content-Disposition') ?? '';
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? 'cairn-query.csv';
  const href = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  // The click has handed the file to the browser; the URL can go once it has been read.
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
  return name;
}

const shellQuote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The same request as a shell command; the token is left to an environment variable. */
export function curlFor(method, path, body) {
  const parts = [`curl -s -X ${method} ${shellQuote(new URL(path, location.origin).href)}`];
  parts.push(`-H "Authorization: Bearer $CAIRN_TOKEN"`);
  if (body !== undefined) {
    parts.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(body))}`);
  }
  return parts.join(' \\\n  ');
}
