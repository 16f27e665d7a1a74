import { ownReadFigures, type Statement } from './compile/own-reads.ts';
import type { Lasting } from './execute/answer-reuse.ts';
import { type Horizon, horizonStatement, validUntil } from './execute/answer-validity.ts';
import type { Holding } from './execute/kept-parts.ts';
import type { Execution, QueryRun } from './execute/query-execution.ts';
import type { AnalyticsQuery } from './parse/query-parser.ts';
import type { QueryPlan } from './plan/query-plan.ts';
import { nullLabels, type Row, sortRows, zeroFill } from './shape/query-rows.ts';

/*
 * A query's statements run under one admission: rows, totals, comparison, the labels filters
 * name, and the horizon statement that says how long their answer holds (answer-validity.ts).
 * Handed what still holds of a kept answer (kept-parts.ts), only the rest runs: a series
 * computes only its buckets from the first one that may have changed.
 */

interface Executed {
  rows: Row[];
  /** Rows the statement had before LIMIT and OFFSET. */
  totalRows: number;
  queryId: string;
  /** The caller's own rows and bytes this statement read (`own-reads.ts`); 0 when reused. */
  rowsRead: number;
  bytesRead: number;
  /** The statement or its companion stopped at the query's time budget. */
  partial: boolean;
}

/** One statement's answer, and whether a cache gave it. */
export type Ran = Executed & { cache: Execution['cache'] };

type KnownLabel = { dimension: string; label: string };

/** What a query's statements answered: all an answer is shaped from. */
export interface Parts {
  main: Ran;
  totals: Ran | null;
  totalsComparison: Ran | null;
  comparison: Ran | null;
  /** The labels named by `eq`/`in` conditions that the businesses ever had; null: not known. */
  labels: KnownLabel[] | null;
  /** Where the next facts lay; null when not asked or not known. */
  horizon?: Horizon | null;
  /** The first bucket start the series rows cover (epoch ms); null without a series. */
  from?: number | null;
  /** Where the comparison was read up to (epoch ms); null without one. */
  comparedUntil?: number | null;
}

/** A plan with the businesses its statements are restricted to (null: no restriction). */
export type PreparedQuery = QueryPlan & { compiled: Statement; businesses: string[] | null };

/** What a computation may take over from a kept answer. */
export interface Held {
  kept: Lasting<Parts>;
  holds: Holding;
}

async function execute(
  run: QueryRun,
  statement: Statement,
  dimensions: AnalyticsQuery['dimensions'],
): Promise<Ran> {
  const { answer, cache, ownReads, partial } = await run.execute(statement, statement.ownReads);
  const read = ownReadFigures(ownReads?.data);
  return {
    rows: nullLabels(answer.data, dimensions),
    // Without dimensions the statement aggregates everything into one row, whatever the engine
    // counts: its rows_before_limit figure can come from a step inside the statement (the
    // blocked-tasks join reported the rows of one of its sides), not from the final SELECT.
    // Only a statement cut by its budget before it aggregated anything has none.
    totalRows:
      dimensions.length === 0
        ? partial && answer.data.length === 0
          ? 0
          : 1
        : Number(answer.rows_before_limit_at_least ?? answer.data.length),
    queryId: answer.query_id,
    rowsRead: read.rows,
    bytesRead: read.bytes,
    partial,
    cache,
  };
}

/** A kept statement's answer, taken over: nothing was read to give it. */
function reused<T extends Ran | null>(ran: T): T {
  return (ran && { ...ran, rowsRead: 0, bytesRead: 0, partial: false, cache: 'hit' }) as T;
}

/**
 * Runs what is left of the planned statements under one query's admission, and the horizon
 * statement unless what it said still holds. `reusable`: only an executor that outlives the
 * request can reuse an answer; an ad hoc one (scripts, tests calling the service) is spared the
 * horizon statement.
 */
export async function computeParts(
  plan: PreparedQuery,
  queryRun: QueryRun,
  now: Date,
  { reusable, maxRows, held }: { reusable: boolean; maxRows: number; held: Held | null },
): Promise<Lasting<Parts> & { store: boolean; kept: 'all' | 'some' | 'none' }> {
  if (held?.holds.all) return { ...held.kept, store: true, kept: 'all' };
  const holds = held?.holds;
  const kept = held?.kept.parts;
  const run = (compiled: Statement | null, dimensions = plan.query.dimensions) =>
    compiled ? execute(queryRun, compiled, dimensions) : Promise.resolve(null);
  // A horizon that fails or is cut short only means the answer is not kept.
  const horizon =
    kept && holds?.horizon
      ? Promise.resolve(kept.horizon ?? null)
      : reusable
        ? horizonAt(plan, queryRun, now).catch(() => null)
        : Promise.resolve(null);
  // A failed label lookup costs only the unknown_filter_value warning, never the answer.
  const labels =
    kept && holds?.labels
      ? Promise.resolve(kept.labels)
      : plan.labels
        ? queryRun
            .execute(plan.labels)
            .then(({ answer, partial }) =>
              partial ? null : (answer.data as unknown as KnownLabel[]),
            )
            .catch(() => null)
        : Promise.resolve(null);
  const time = plan.query.dimensions[0] as string;
  // The buckets that hold keep their rows; the statement reads only the rest.
  const withTail = async (
    before: Ran,
    count: number,
    buckets: Array<{ label: string }>,
    tail: Statement,
  ): Promise<Ran> => {
    const ran = await run(tail);
    if (!ran) throw new Error('a series always has rows to compute');
    const closed = new Set(buckets.slice(0, count).map((b) => b.label));
    const merged = [...before.rows.filter((row) => closed.has(row[time] as string)), ...ran.rows];
    return { ...ran, rows: merged, totalRows: merged.length };
  };
  const rows = async (): Promise<Ran | null> => {
    if (kept && holds?.main) return reused(kept.main);
    if (!(kept && holds && holds.buckets > 0)) return run(plan.rows);
    return withTail(kept.main, holds.buckets, plan.buckets ?? [], plan.rowsFrom(holds.buckets));
  };
  const compareRows = (page: Row[]): Promise<Ran | null> => {
    const other = plan.comparison;
    if (!other) return Promise.resolve(null);
    const count = holds?.comparedBuckets ?? 0;
    const first = other.buckets?.[count];
    // Only where the rest starts before the cut: past it there is nothing left to read.
    if (kept?.comparison && count > 0 && first && first.start < other.period.until) {
      return withTail(kept.comparison, count, other.buckets ?? [], other.rowsFrom(count));
    }
    return run(other.rows(page));
  };
  const compared = kept && holds?.comparison;
  const [main, totals, totalsComparison] = await Promise.all([
    rows(),
    kept && holds?.totals ? reused(kept.totals) : run(plan.totals, []),
    compared ? reused(kept.totalsComparison) : run(plan.comparison?.totals ?? null, []),
  ]);
  if (!main) throw new Error('the row statement always runs');
  const comparison = compared
    ? reused(kept.comparison)
    : await compareRows(pageOf(plan, main, now, maxRows).rows);
  const reached = await horizon;
  const parts: Parts = {
    main,
    totals,
    totalsComparison,
    comparison,
    labels: await labels,
    horizon: reached,
    from: plan.series ? (plan.buckets?.[0]?.start.getTime() ?? null) : null,
    comparedUntil: comparison ? (plan.comparison?.period.until.getTime() ?? null) : null,
  };
  const executed = [main, totals, totalsComparison, comparison].filter((e) => e !== null);
  const everyPart =
    holds?.main === true &&
    (holds.totals || !plan.totals) &&
    (holds.comparison || !plan.comparison) &&
    (holds.labels || !plan.labels);
  const somePart =
    holds !== undefined &&
    (holds.buckets > 0 ||
      holds.main ||
      (holds.totals && plan.totals !== null) ||
      holds.comparedBuckets > 0 ||
      (holds.comparison && plan.comparison !== null));
  return {
    parts,
    computedAt: now.getTime(),
    validUntil: reached ? validUntil(plan, now, reached) : now.getTime(),
    // An answer cut short by its budget is never kept: the next caller may get it whole.
    store: reached !== null && !executed.some((e) => e.partial),
    kept: everyPart ? 'all' : somePart ? 'some' : 'none',
  };
}

/**
 * The page of rows: a series zero-filled to every bucket and paged here, others as read. Buckets
 * a statement cut by its budget did not answer read null.
 */
export function pageOf(plan: QueryPlan, main: Executed, now: Date, maxRows: number) {
  const { query } = plan;
  if (!(plan.series && plan.buckets)) return { rows: main.rows, totalRows: main.totalRows };
  const filled = sortRows(zeroFill(main.rows, query, plan.buckets, now, main.partial), query);
  return {
    rows: filled.slice(query.offset, query.offset + (query.limit ?? maxRows)),
    totalRows: filled.length,
  };
}

/**
 * The horizon statement's answer at `now`. Without a cut comparison it is only "the first fact
 * at or after now", which a later reading at the same watermark can take over while it still
 * lies ahead (or none did): of the queries that share the businesses, each refresh and each
 * `no-cache` caller then spares the engine one statement. A fact projected since has moved the
 * watermark, and with it the key.
 */
async function horizonAt(
  plan: PreparedQuery,
  queryRun: QueryRun,
  now: Date,
): Promise<Horizon | null> {
  const ask = async (): Promise<Horizon | null> => {
    const { answer, partial } = await queryRun.execute(
      horizonStatement(plan, now, plan.businesses),
      undefined,
      { store: false },
    );
    return partial ? null : (answer.data[0] as unknown as Horizon);
  };
  if (plan.comparison?.period.cutAtElapsed) return ask();
  const at = now.getTime();
  const kept = await queryRun.remembered<{ asked: number; next: number | null }>(
    ['next_fact', plan.businesses],
    ({ asked, next }) => asked <= at && (next === null || next >= at),
    async () => {
      const horizon = await ask();
      if (!horizon) return undefined;
      return { asked: at, next: horizon.next_fact === null ? null : Number(horizon.next_fact) };
    },
  );
  return kept ? { next_fact: kept.next, next_compared: null } : null;
}
