import path from 'node:path';
import type { Area } from '../variable.ts';
import { directory, flag, integer } from '../variable-kinds.ts';
import { DATA_DIR } from './process.ts';

export const CAIRN_QUERY_MAX_ROWS = integer({
  name: 'CAIRN_QUERY_MAX_ROWS',
  default: 10_000,
  min: 1,
  max: 1_000_000,
  doc: 'row cap of one analytics answer (`result_truncated` beyond it)',
});

// An export streams rather than being held, so its cap is far above an answer's.
export const CAIRN_EXPORT_MAX_ROWS = integer({
  name: 'CAIRN_EXPORT_MAX_ROWS',
  default: 1_000_000,
  min: 1,
  max: 100_000_000,
  doc: 'row cap of one CSV or NDJSON export of a query (`result_truncated` in `Cairn-Warnings` beyond it)',
});

export const CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL = integer({
  name: 'CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL',
  default: 2,
  min: 1,
  max: 1_000,
  doc: 'exports one token may be downloading at once; the next is refused 429',
});

export const CAIRN_EMBED_RATE_LIMIT = integer({
  name: 'CAIRN_EMBED_RATE_LIMIT',
  default: 300,
  min: 1,
  max: 1_000_000,
  doc: 'requests a minute one embed token may make (its chart page and answers), a budget apart from API tokens and addresses',
});

export const CAIRN_VIEW_METRICS_MAX_SERIES = integer({
  name: 'CAIRN_VIEW_METRICS_MAX_SERIES',
  default: 1000,
  min: 1,
  max: 1_000_000,
  doc: 'series `GET /metrics/views` serves at most (views in order of creation; series past the cap are left out)',
});

export const CAIRN_VIEW_METRICS_INTERVAL_S = integer({
  name: 'CAIRN_VIEW_METRICS_INTERVAL_S',
  default: 60,
  min: 1,
  max: 86_400,
  doc: 'a `prometheus` view is answered for `/metrics/views` at most once per this many seconds (through the answer cache)',
});

// The file waits there so no engine slot is held at a client's pace.
export const CAIRN_SPOOL_DIR = directory({
  name: 'CAIRN_SPOOL_DIR',
  default: { derive: (read) => path.join(read(DATA_DIR), 'spool') },
  shown: '`DATA_DIR/spool`',
  doc: "where an export's rows wait for a slow reader once the engine has answered (owner-only files, unlinked as soon as they are open)",
});

export const CAIRN_SEND_IDLE_TIMEOUT_MS = integer({
  name: 'CAIRN_SEND_IDLE_TIMEOUT_MS',
  default: 30_000,
  min: 100,
  max: 3_600_000,
  doc: 'a response whose reader takes nothing for this long is cut (a file then ends without its last chunk)',
});

// One setting per process: the CSV writer reads it once.
export const CAIRN_CSV_FORMULA_ESCAPE = flag({
  name: 'CAIRN_CSV_FORMULA_ESCAPE',
  default: true,
  spelled: ['true', 'false'],
  doc: "`false`: CSV labels starting with `=`, `+`, `-`, `@`, tab or CR are written as they are, not behind a `'` ([analytics](analytics.md#exports))",
});

// Embedded chDB cannot interrupt a statement, so there one statement also gets at most half the
// queue wait: another caller's query waits behind at most one such statement.
export const CAIRN_QUERY_TIMEOUT_MS = integer({
  name: 'CAIRN_QUERY_TIMEOUT_MS',
  default: 10_000,
  min: 1,
  max: 600_000,
  doc: 'time budget of one analytics query, its statements together (rows, totals, comparison, own-reads); `partial_result` when spent',
});

export const CAIRN_STALE_AFTER_MS = integer({
  name: 'CAIRN_STALE_AFTER_MS',
  default: 5_000,
  min: 0,
  max: 86_400_000,
  doc: 'projection lag that earns a `stale_data` warning',
});

export const CAIRN_QUERY_MAX_MEMORY_BYTES = integer({
  name: 'CAIRN_QUERY_MAX_MEMORY_BYTES',
  default: 1_073_741_824,
  min: 1_048_576,
  max: 2 ** 50,
  shown: '`1073741824` (1 GiB)',
  doc: 'memory one analytics query may use (ClickHouse `max_memory_usage`); over it: 422 problem',
});

export const CAIRN_QUERY_CONCURRENCY = integer({
  name: 'CAIRN_QUERY_CONCURRENCY',
  default: 8,
  min: 1,
  max: 1_000,
  doc: 'analytics queries admitted at once, all callers (embedded chDB runs one statement at a time, in turns between tokens)',
});

export const CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL = integer({
  name: 'CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL',
  default: 2,
  min: 1,
  max: 1_000,
  doc: 'analytics queries one token may have running',
});

export const CAIRN_QUERY_QUEUE_PER_PRINCIPAL = integer({
  name: 'CAIRN_QUERY_QUEUE_PER_PRINCIPAL',
  default: 8,
  min: 0,
  max: 10_000,
  doc: 'further queries one token may have waiting; the next is refused 429',
});

// Twice the budget: a query waiting behind one that spends its whole budget is not refused as
// that one ends.
export const CAIRN_QUERY_QUEUE_WAIT_MS = integer({
  name: 'CAIRN_QUERY_QUEUE_WAIT_MS',
  default: { derive: (read) => 2 * read(CAIRN_QUERY_TIMEOUT_MS) },
  min: 1,
  max: 1_200_000,
  shown: 'twice `CAIRN_QUERY_TIMEOUT_MS`',
  doc: "longest wait for admission while the token's own cap or the overall cap holds a query, before a 429/503 with `Retry-After`; on chDB one statement runs at most half of it",
});

export const CAIRN_QUERY_CACHE_BYTES = integer({
  name: 'CAIRN_QUERY_CACHE_BYTES',
  default: 67_108_864,
  min: 0,
  max: 2 ** 40,
  shown: '`67108864` (64 MiB)',
  doc: 'byte bound of the result cache (memory, or Redis when `REDIS_URL` is set); 0 turns it off',
});

export const ANALYTICS: Area = {
  title: 'Analytics queries',
  variables: [
    CAIRN_QUERY_MAX_ROWS,
    CAIRN_EXPORT_MAX_ROWS,
    CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL,
    CAIRN_EMBED_RATE_LIMIT,
    CAIRN_VIEW_METRICS_MAX_SERIES,
    CAIRN_VIEW_METRICS_INTERVAL_S,
    CAIRN_SPOOL_DIR,
    CAIRN_SEND_IDLE_TIMEOUT_MS,
    CAIRN_CSV_FORMULA_ESCAPE,
    CAIRN_QUERY_TIMEOUT_MS,
    CAIRN_STALE_AFTER_MS,
    CAIRN_QUERY_MAX_MEMORY_BYTES,
    CAIRN_QUERY_CONCURRENCY,
    CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL,
    CAIRN_QUERY_QUEUE_PER_PRINCIPAL,
    CAIRN_QUERY_QUEUE_WAIT_MS,
    CAIRN_QUERY_CACHE_BYTES,
  ],
};
