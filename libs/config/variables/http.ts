import type { Area } from '../variable.ts';
import { integer } from '../variable-kinds.ts';
import { origins } from '../variable-lists.ts';

export const CAIRN_HTTP_HEADERS_TIMEOUT_MS = integer({
  name: 'CAIRN_HTTP_HEADERS_TIMEOUT_MS',
  default: 10_000,
  min: 100,
  max: 600_000,
  doc: 'until request headers are in (408)',
});

export const CAIRN_HTTP_REQUEST_TIMEOUT_MS = integer({
  name: 'CAIRN_HTTP_REQUEST_TIMEOUT_MS',
  default: 30_000,
  min: 100,
  max: 3_600_000,
  doc: 'until the whole request, body included, is in (408)',
});

export const CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS = integer({
  name: 'CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS',
  default: 5_000,
  min: 100,
  max: 600_000,
  doc: 'keep-alive window announced to clients (`Keep-Alive: timeout=5`); an idle connection is closed a second after it, and only if no request has arrived on it',
});

export const CAIRN_HTTP_MAX_CONNECTIONS = integer({
  name: 'CAIRN_HTTP_MAX_CONNECTIONS',
  default: 1_000,
  min: 1,
  max: 1_000_000,
  doc: 'connections the server holds at most; when it is full, the address holding the most makes room with its slowest connection that may go (part of a request head waiting for the rest, fresh and silent for a second, or idle past the keep-alive window), and a new connection is refused only when none may go; a connection with a request in flight never goes',
});

export const CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS = integer({
  name: 'CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS',
  default: 100,
  min: 1,
  max: 1_000_000,
  doc: "connections one client address holds at most (at most `CAIRN_HTTP_MAX_CONNECTIONS`); one more is refused at once. IPv4 addresses (also as `::ffff:a.b.c.d`) count one by one, public IPv6 addresses by /64; behind a reverse proxy every client has the proxy's address: raise it to `CAIRN_HTTP_MAX_CONNECTIONS` there",
});

export const CAIRN_CORS_ORIGINS = origins({
  name: 'CAIRN_CORS_ORIGINS',
  shown: 'unset → no CORS',
  doc: 'comma-separated origins (`https://dash.example.com`) allowed from browsers; `*` any',
});

export const CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES = integer({
  name: 'CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES',
  default: 262_144,
  min: 1_024,
  max: 16_777_216,
  doc: 'largest answer kept for an `Idempotency-Key` replay',
});

export const CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS = integer({
  name: 'CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS',
  default: 1_000,
  min: 1,
  max: 1_000_000,
  doc: '`Idempotency-Key` answers of `/query` kept per principal; past it the oldest go first, and a retry with an evicted key runs the query again',
});

export const CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES = integer({
  name: 'CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES',
  default: 16_777_216,
  min: 1_024,
  max: 2 ** 40,
  shown: '`16777216` (16 MiB)',
  doc: 'the same bound in bytes of kept answers per principal',
});

// So no page costs a scan of a whole business.
export const CAIRN_TASK_LIST_MAX_DEPTH = integer({
  name: 'CAIRN_TASK_LIST_MAX_DEPTH',
  default: 10_000,
  min: 100,
  max: 1_000_000,
  doc: 'how deep page-number task lists go: a page is served while page × per_page stays within this many tasks, and totals are counted up to it; past it a list answers 422 pointing to narrower filters',
});

export const HTTP: Area = {
  title: 'HTTP',
  variables: [
    CAIRN_HTTP_HEADERS_TIMEOUT_MS,
    CAIRN_HTTP_REQUEST_TIMEOUT_MS,
    CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS,
    CAIRN_HTTP_MAX_CONNECTIONS,
    CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    CAIRN_CORS_ORIGINS,
    CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES,
    CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS,
    CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES,
    CAIRN_TASK_LIST_MAX_DEPTH,
  ],
};
