import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import { ROLLUP_NAMES, type RollupName, rollupDef } from '../analytics/sources/rollups.ts';
import { CLICKHOUSE_MIGRATIONS_DIR } from '../storage/clickhouse.ts';
import type { Database } from '../storage/database.ts';
import { BLOCKED_UNKNOWN, replayBlocked } from './blocked-replay.ts';
import { tryLockCheckpoint } from './outbox-reader.ts';
import { FACTS_CHECKPOINT, holdLiveProjector, releaseLiveProjector } from './projector.ts';
import type { RollupBuilds } from './rollup-builds.ts';

export interface BackfillOptions {
  db: Kysely<Database>;
  clickhouse: ClickHouseClient;
  builds: RollupBuilds;
  /** Default: every rollup. */
  rollups?: readonly RollupName[];
  /**
   * Told after each month of facts (and each business the blocked replay works out); `total`
   * counts the facts to read, once per month pass and once more per replay.
   */
  onProgress?: (progress: { done: number; total: number }) => void;
  /** Stops between months (shutdown); the rollups stay incomplete and queries keep to facts. */
  signal?: AbortSignal;
}

/** How long the backfill looks for a moment between projector batches before it gives up. */
const RESET_WITHIN_MS = 5 * 60_000;

/**
 * Fills rollups from the facts already in ClickHouse, while facts keep arriving through the
 * rollups' views. Each fact must be counted once, by the view or by the backfill: the rollups
 * are emptied at an instant (the cutoff) when no projector insert is in flight, so every fact
 * projected before it has `projected_at` at or below it and every later one passes through the
 * view. (`demo` writes facts without the projector: let it finish before a backfill starts.)
 * Queries read facts until the rollups are marked complete again.
 */
export async function backfillRollups(options: BackfillOptions): Promise<{ facts: number }> {
  const names = options.rollups ?? ROLLUP_NAMES;
  await options.builds.mark(names, false);
  // Other API processes re-read the set every refreshMs: let them stop reading these first.
  await new Promise((resolve) => setTimeout(resolve, 2 * options.builds.refreshMs));
  const giveUpAt = Date.now() + RESET_WITHIN_MS;
  let cutoff: string | null = null;
  try {
    while (cutoff === null) {
      await holdLiveProjector(options.db, new Date());
      // Held, no batch in flight: none can start until the hold is released, and no Postgres
      // lock is kept while ClickHouse empties the rollups (however long that takes).
      if (await projectorIdle(options.db)) {
        cutoff = await resetRollups(options.clickhouse, names);
        break;
      }
      if (Date.now() > giveUpAt) throw new Error('the projector never paused between batches');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await releaseLiveProjector(options.db);
  }
  const facts = await fillRollups(options, names, cutoff);
  if (!options.signal?.aborted) await options.builds.mark(names, true);
  return { facts };
}

/**
 * Whether no projector batch is in flight. Read under the checkpoint's lock, which every batch
 * takes to start and to finish, so a batch that starts later has seen a hold set before this
 * call. A checkpoint locked right now (a batch starting or finishing) is not idle: the caller
 * tries again rather than waiting behind it.
 */
async function projectorIdle(db: Kysely<Database>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const live = await tryLockCheckpoint(trx, FACTS_CHECKPOINT);
    return live !== null && live.pending === null;
  });
}

/** Takes the cutoff and empties the rollups; the caller guarantees no insert is in flight. */
export async function resetRollups(
  clickhouse: ClickHouseClient,
  names: readonly RollupName[],
): Promise<string> {
  const result = await clickhouse.query({
    query: 'SELECT toString(now64(3)) AS cutoff',
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ cutoff: string }>();
  for (const name of names) await clickhouse.command({ query: `TRUNCATE TABLE ${name}` });
  // Facts projected before hold projected_at <= cutoff; let the clock pass it before any other
  // insert may start, so none after holds it too.
  await new Promise((resolve) => setTimeout(resolve, 5));
  return row?.cutoff as string;
}

/** Aggregates the facts projected up to `cutoff` into the rollups, a month at a time. */
export async function fillRollups(
  options: Pick<BackfillOptions, 'clickhouse' | 'onProgress' | 'signal'>,
  names: readonly RollupName[],
  cutoff: string,
): Promise<number> {
  const { clickhouse } = options;
  const params = { cutoff };
  const monthsResult = await clickhouse.query({
    query: `SELECT toYYYYMM(occurred_at) AS month, count() AS facts FROM facts
      WHERE projected_at <= {cutoff:DateTime64(3, 'UTC')} GROUP BY month ORDER BY month`,
    query_params: params,
    format: 'JSONEachRow',
  });
  const months = (await monthsResult.json<{ month: number; facts: number }>()).map((m) => ({
    month: Number(m.month),
    facts: Number(m.facts),
  }));
  const facts = months.reduce((sum, m) => sum + m.facts, 0);
  const enrich = await anyProjected(clickhouse, cutoff, UNENRICHED);
  // One fact without its blocked changes and they all come from the replay, which works out
  // every change the facts imply; the ones facts carry would count twice.
  const replay = (await anyProjected(clickhouse, cutoff, BLOCKED_UNKNOWN))
    ? names.filter((name) => rollupDef(name).blocked === true)
    : [];
  const views = await Promise.all(
    names.map(async (name) => {
      const selects = await viewSelects(name, {
        enrich: enrich && rollupDef(name).completions === true,
        withoutBlocked: replay.includes(name),
      });
      // By name: a view that fills only some of the rollup's columns leaves the rest at their
      // defaults, as its inserts through the view do.
      return Promise.all(
        selects.map(async (select) => ({
          select,
          columns: await outputColumns(clickhouse, select, { ...params, month: 0 }),
        })),
      );
    }),
  );
  // The replay reads every fact once more per rollup it fills.
  const total = facts * (1 + replay.length);
  let done = 0;
  options.onProgress?.({ done, total });
  for (const month of months) {
    if (options.signal?.aborted) break;
    for (const [i, name] of names.entries()) {
      for (const { select, columns } of views[i] ?? []) {
        await clickhouse.command({
          query: `INSERT INTO ${name} (${columns}) ${select}`,
          query_params: { ...params, month: month.month },
          clickhouse_settings: {
            // Each month's blocks are new data: none may be dropped as a repeat of another's.
            insert_deduplicate: 0,
            // On a cluster a task's facts all live on one shard (facts shard by task), so the
            // enrichment's subqueries read each shard's own facts.
            distributed_product_mode: 'local',
          },
        });
      }
    }
    done += month.facts;
    options.onProgress?.({ done, total });
  }
  for (const name of replay) {
    await replayBlocked(clickhouse, name, cutoff, {
      signal: options.signal,
      onBusiness: (read) => {
        done += read;
        options.onProgress?.({ done, total });
      },
    });
  }
  return facts;
}

const SOURCE = /\bFROM facts\b/g;
const PROJECTED = "projected_at <= {cutoff:DateTime64(3, 'UTC')}";
const MONTH = `SELECT * FROM facts WHERE ${PROJECTED} AND toYYYYMM(occurred_at) = {month:UInt32}`;
/** A completion projected before completion facts named their task's creation labels. */
const UNENRICHED = "kind = 'task_completed' AND created_status = ''";

/**
 * The month's facts with every unenriched completion given what the write side now records:
 * the labels of its task's creation fact, and whether it is the task's earliest completion (a
 * task whose creation is not among the facts has nothing to be credited to).
 */
const ENRICHED_MONTH = `SELECT f.* REPLACE (
    if(enrich, e_project, f.created_project) AS created_project,
    if(enrich, e_assignee, f.created_assignee) AS created_assignee,
    if(enrich, e_status, f.created_status) AS created_status,
    if(enrich, toUInt8(f.fact_id = e_first AND e_status != ''), f.first_completion) AS first_completion)
  FROM (SELECT *, ${UNENRICHED} AS enrich FROM (${MONTH})) AS f
  LEFT JOIN (
    SELECT task_gid AS e_task_gid,
      anyIf(project, kind = 'task_created') AS e_project,
      anyIf(assignee, kind = 'task_created') AS e_assignee,
      anyIf(status, kind = 'task_created') AS e_status,
      argMinIf(fact_id, (occurred_at, fact_id), kind = 'task_completed') AS e_first
    FROM facts
    WHERE kind IN ('task_created', 'task_completed') AND ${PROJECTED}
      AND task_gid IN (SELECT task_gid FROM (${MONTH}) WHERE ${UNENRICHED})
    GROUP BY task_gid
  ) AS e ON f.task_gid = e.e_task_gid`;

/**
 * Whether facts projected up to the cutoff include one matching `condition`: a completion from
 * before enrichment, or a fact from before blocked changes were recorded.
 */
async function anyProjected(
  clickhouse: ClickHouseClient,
  cutoff: string,
  condition: string,
): Promise<boolean> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM (SELECT 1 FROM facts WHERE ${condition} AND ${PROJECTED} LIMIT 1)`,
    query_params: { cutoff },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: number }>();
  return Number(row?.n ?? 0) > 0;
}

/**
 * The SELECT of each view feeding a rollup, as its schema file defines it (the views the
 * migrations create and do not later drop: since 0059 one per rollup, `NNNN_<rollup>_feed_mv.sql`),
 * over one month of the facts projected before the cutoff: the backfill aggregates exactly as
 * the views do. `enrich`: over those facts as ENRICHED_MONTH gives them. `withoutBlocked`: with
 * no blocked changes (the replay adds them).
 */
async function viewSelects(
  name: RollupName,
  options: { enrich: boolean; withoutBlocked: boolean },
): Promise<string[]> {
  const files = (await feedingViews()).get(name) ?? [];
  if (files.length === 0) throw new Error(`no view file for ${name}`);
  return Promise.all(files.map((file) => viewSelect(file, options)));
}

const CREATE_VIEW = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\b/m;
const DROP_VIEW = /^DROP VIEW IF EXISTS (\w+)\s*$/m;

/** The schema files of the views the migrations leave in place, by the table each writes to. */
export async function feedingViews(): Promise<Map<string, string[]>> {
  const files = (await fs.readdir(CLICKHOUSE_MIGRATIONS_DIR))
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const views = new Map<string, { file: string; target: string }>();
  for (const file of files) {
    const text = await fs.readFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, file), 'utf8');
    const created = CREATE_VIEW.exec(text);
    if (created?.[1] && created[2]) views.set(created[1], { file, target: created[2] });
    const dropped = DROP_VIEW.exec(text);
    if (dropped?.[1]) views.delete(dropped[1]);
  }
  const byTarget = new Map<string, string[]>();
  for (const { file, target } of views.values()) {
    byTarget.set(target, [...(byTarget.get(target) ?? []), file]);
  }
  return byTarget;
}

/** The names of the columns `select` yields, in order, as backquoted identifiers. */
async function outputColumns(
  clickhouse: ClickHouseClient,
  select: string,
  params: Record<string, unknown>,
): Promise<string> {
  const result = await clickhouse.query({
    query: `DESCRIBE TABLE (${select})`,
    query_params: params,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ name: string }>();
  return rows.map((row) => `\`${row.name.replaceAll('`', '\\`')}\``).join(', ');
}

async function viewSelect(
  file: string,
  options: { enrich: boolean; withoutBlocked: boolean },
): Promise<string> {
  const text = await fs.readFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, file), 'utf8');
  const select = text.slice(text.search(/\bAS\s+SELECT\b/) + 2).trim();
  if (select.match(SOURCE)?.length !== 1) throw new Error(`${file} must read facts once`);
  const month = options.enrich ? ENRICHED_MONTH : MONTH;
  const source = options.withoutBlocked
    ? `SELECT * REPLACE (CAST([], 'Array(Int8)') AS blocked_change) FROM (${month})`
    : month;
  return select.replace(SOURCE, `FROM (${source})`);
}
