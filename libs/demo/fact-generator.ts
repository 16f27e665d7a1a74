import type { ClickHouseClient } from '@clickhouse/client';

export interface FactGeneratorOptions {
  /** How many facts to write. */
  facts: number;
  /** Same seed, same facts. */
  seed: number;
  /** The last instant facts may carry; they spread over the year before it. */
  now: Date;
  businesses?: number;
  /** Facts per INSERT. */
  batchSize?: number;
  /** Called after each batch with the number of facts written so far. */
  onProgress?: (written: number) => void;
}

/** Generated facts get ids far above any outbox id, so they never collide with real ones. */
export const DEMO_FACT_ID_BASE = 1_000_000_000_000_000;
const YEAR_MS = 365 * 86_400_000;

/**
 * One task's life in five facts, shaped as the write side shapes them, computed by ClickHouse
 * itself from a hash of (seed, task), so millions of rows need no round trip through
 * JavaScript: created (open) → a dependency on an older task of the same business (or a rename)
 * → in progress → completed (70 %, an update and its completion fact), cancelled (10 %) or
 * reassigned and still in progress (20 %), each of those two followed later by a rename (or, for
 * one task in twenty that has a dependency, by its removal). A completion (a task's only one)
 * names the labels its task was created with, when it first went in progress and how long it was
 * blocked (its dependency open while it was), as the write side's do. Every column is a pure
 * function of the row number: any batch can be (re)written alone.
 */
const INSERT_BATCH = `
INSERT INTO facts (fact_id, kind, business, task_gid, occurred_at, project, assignee, status,
  previous_status, previous_project, previous_assignee, previous_due_on, due_on, task_created_at,
  dependency_gid, created_project, created_assignee, created_status, first_completion, started_at, blocked_ms)
SELECT fact_id, kind, business, task_gid, occurred_at, project, assignee, status, previous_status,
  project, previous_assignee, due_on, due_on, task_created_at, dependency_gid,
  if(completion, project, ''), if(completion, first_assignee, ''), if(completion, 'open', ''),
  completion, if(completion, started, NULL), if(completion, blocked_ms, NULL)
FROM (
  WITH
    intDiv(number, 5) AS task,
    number % 5 AS slot,
    cityHash64({seed:UInt64}, task) AS h,
    h % 100 AS fate,
    task - {businesses:UInt64} * (1 + h % 10) AS dependency,
    {now:DateTime64(3, 'UTC')} - toIntervalMillisecond(1) AS last,
    least({now:DateTime64(3, 'UTC')} - toIntervalMillisecond(${YEAR_MS}) + toIntervalMillisecond(h % ${YEAR_MS}), last) AS created,
    least(created + toIntervalMillisecond(3600000 + cityHash64(h, 1) % 259200000), last) AS started,
    least(started + toIntervalMillisecond(cityHash64(h, 2) % 1209600000), last) AS ended,
    least(ended + toIntervalMillisecond(cityHash64(h, 7) % 604800000), last) AS renamed,
    concat('user-', toString(cityHash64(h, 4) % 60)) AS first_assignee,
    if(slot >= 3 AND fate >= 80, concat('user-', toString(cityHash64(h, 5) % 60)), first_assignee) AS assignee,
    multiIf(slot < 2, 'open', slot = 2, 'in_progress', fate < 70, 'completed', fate < 80, 'cancelled', 'in_progress') AS status,
    cityHash64({seed:UInt64}, dependency) AS dh,
    least({now:DateTime64(3, 'UTC')} - toIntervalMillisecond(${YEAR_MS}) + toIntervalMillisecond(dh % ${YEAR_MS}), last) AS dependency_created,
    least(least(dependency_created + toIntervalMillisecond(3600000 + cityHash64(dh, 1) % 259200000), last) + toIntervalMillisecond(cityHash64(dh, 2) % 1209600000), last) AS dependency_ended,
    if(dh % 100 < 80, dependency_ended, ended) AS dependency_open_until,
    if(task >= {businesses:UInt64} * 10,
      greatest(toInt64(0), toUnixTimestamp64Milli(least(ended, dependency_open_until)) - toUnixTimestamp64Milli(greatest(least(created + toIntervalSecond(1), last), dependency_created))),
      toInt64(0)) AS blocked_ms
  SELECT
    {base:UInt64} + number AS fact_id,
    multiIf(slot = 0, 'task_created', slot = 1, if(task >= {businesses:UInt64} * 10, 'dependency_added', 'task_updated'),
      slot = 4 AND fate < 70, 'task_completed',
      slot = 4 AND fate >= 95 AND task >= {businesses:UInt64} * 10, 'dependency_removed', 'task_updated') AS kind,
    concat('biz-', toString(task % {businesses:UInt64})) AS business,
    concat('demo-', toString({seed:UInt64}), '-', toString(task)) AS task_gid,
    multiIf(slot = 0, created, slot = 1, least(created + toIntervalSecond(1), last), slot = 2, started,
      slot = 3 OR fate < 70, ended, renamed) AS occurred_at,
    concat('project-', toString(cityHash64(h, 3) % 12)) AS project,
    assignee,
    status,
    multiIf(slot = 0, '', slot <= 2, 'open', slot = 3 OR fate < 70, 'in_progress', status) AS previous_status,
    if(slot = 3, first_assignee, assignee) AS previous_assignee,
    if(h % 10 < 7, toDate(created + toIntervalDay(3 + cityHash64(h, 6) % 30)), NULL) AS due_on,
    created AS task_created_at,
    if((slot = 1 OR (slot = 4 AND fate >= 95)) AND task >= {businesses:UInt64} * 10, concat('demo-', toString({seed:UInt64}), '-', toString(dependency)), '') AS dependency_gid,
    first_assignee,
    started,
    blocked_ms,
    toUInt8(kind = 'task_completed') AS completion
  FROM numbers({offset:UInt64}, {count:UInt64})
)`;

/** Streams `facts` generated facts into ClickHouse, batch by batch; deterministic by seed. */
export async function generateFacts(
  client: ClickHouseClient,
  options: FactGeneratorOptions,
): Promise<number> {
  const batchSize = options.batchSize ?? 500_000;
  let written = 0;
  while (written < options.facts) {
    const count = Math.min(batchSize, options.facts - written);
    await client.command({
      query: INSERT_BATCH,
      query_params: {
        seed: options.seed,
        businesses: options.businesses ?? 20,
        now: options.now.toISOString().replace('T', ' ').replace('Z', ''),
        base: DEMO_FACT_ID_BASE + options.seed * 10_000_000_000,
        offset: written,
        count,
      },
    });
    written += count;
    options.onProgress?.(written);
  }
  return written;
}
