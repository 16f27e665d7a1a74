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

/** One API call with the stored token; JSON in, JSON out, errors thrown as ApiError. */
export async function api(method, path, body) {
  const headers = { Accept: 'application/json', Authorization: `Bearer ${token.get()}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
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
