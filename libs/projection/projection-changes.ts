import { sql } from 'kysely';
import type { ChangeMark, NewFacts } from '../analytics/execute/answer-freshness.ts';
import type { Db } from '../storage/database.ts';

/*
 * The change log beside the projector's checkpoint (0015_projection_changes.sql): per committed
 * batch and business, the span of occurred_at its facts covered. A kept analytics answer
 * remembers the last row it saw; the rows after it say from which instant on its figures may
 * have moved, for the businesses it reads. Only the live projection logs: a rebuild fills
 * another table, and its swap logs a change to everything. An erasure's rows (0016) name the
 * erasure instead of the business: a change to everything for readers of that business only.
 */

/** One business's facts in a batch: the instants a late fact can reach back to and ahead to. */
export interface FactSpan {
  business: string;
  earliest: string;
  latest: string;
}

/** Rows kept this long; an answer kept longer is computed afresh. */
const KEPT_FOR = '1 hour';

/** Each business's earliest and latest fact among `facts`. */
export function factSpans(facts: Array<{ business: string; occurred_at: string }>): FactSpan[] {
  const spans = new Map<string, FactSpan>();
  for (const { business, occurred_at } of facts) {
    const span = spans.get(business);
    if (!span) spans.set(business, { business, earliest: occurred_at, latest: occurred_at });
    else {
      if (Date.parse(occurred_at) < Date.parse(span.earliest)) span.earliest = occurred_at;
      if (Date.parse(occurred_at) > Date.parse(span.latest)) span.latest = occurred_at;
    }
  }
  return [...spans.values()];
}

/**
 * The SQL that logs `spans` once the data-modifying CTE `moved` has returned the cursor (the
 * batch's commit, which locks the checkpoint first, so rows are numbered in commit order), and
 * prunes rows past their time.
 */
export const logSpans = (spans: FactSpan[]) => sql`pruned as (
    delete from projection_changes where seq <= (
      select max(seq) from projection_changes where logged_at < now() - ${KEPT_FOR}::interval)
  )
  insert into projection_changes (business, earliest, latest, cursor_xid, cursor_id)
  select c.business, c.earliest, c.latest, moved.cursor_xid, moved.cursor_id
  from jsonb_to_recordset(${JSON.stringify(spans)}::jsonb)
    as c(business text, earliest timestamptz, latest timestamptz)
  cross join moved`;

/**
 * Logs a change to every business from the beginning of time: facts reached ClickHouse around
 * the projector, or a rebuild replaced them. Every kept answer is computed afresh after it.
 * `checkpoint` names the live projection's, whose cursor the row records.
 */
export async function logEverythingChanged(db: Db, checkpoint: string): Promise<void> {
  await sql`insert into projection_changes (business, cursor_xid, cursor_id)
    select null, cursor_xid, cursor_id from projector_checkpoints
    where name = ${checkpoint}`.execute(db);
}

/**
 * Logs an erasure as a change to the business it names alone (through business_erasures, so
 * the row itself does not name it): answers of other businesses kept before it still hold.
 */
export async function logErasureChange(db: Db, checkpoint: string, erasure: string): Promise<void> {
  await sql`insert into projection_changes (erasure, cursor_xid, cursor_id)
    select ${erasure}::uuid, cursor_xid, cursor_id from projector_checkpoints
    where name = ${checkpoint}`.execute(db);
}

/**
 * Takes the name of `business` out of the log: its rows become rows of its erasure, a change
 * to that business alone, as they were. They keep their place: a kept answer of any business
 * may remember one of them as the last change it saw.
 */
export async function forgetBusinessChanges(
  db: Db,
  business: string,
  erasure: string,
): Promise<void> {
  await db
    .updateTable('projection_changes')
    .set({ business: null, earliest: null, latest: null, erasure })
    .where('business', '=', business)
    .execute();
}

/**
 * The SQL of the last logged row as a mark (`seq` and `logged_at` in microseconds), given the
 * live checkpoint as `c`; null when none is logged, or when the cursor has moved past the last
 * logged change (facts projected without a log row: nothing kept can be trusted in part).
 */
export const LAST_MARK = sql<string | null>`(
  select case when l.cursor_xid = c.cursor_xid and l.cursor_id = c.cursor_id
    then l.seq::text || ':' || (extract(epoch from l.logged_at) * 1000000)::bigint::text end
  from projection_changes l order by l.seq desc limit 1)`;

export function parseMark(text: string | null): ChangeMark | null {
  if (!text) return null;
  const [seq, stamp] = text.split(':');
  return { seq: Number(seq), stamp: stamp ?? '' };
}

/**
 * What was projected after `from` up to `to` for `businesses` (null: all of them), or null when
 * that cannot be told: the log no longer reaches back to `from` (pruned, or another history
 * after a restore), or `from` lies after `to` (a reading older than the kept answer).
 */
export async function changesSince(
  db: Db,
  from: ChangeMark,
  to: ChangeMark,
  businesses: string[] | null,
): Promise<NewFacts | null> {
  if (from.seq > to.seq) return null;
  if (from.seq === to.seq) {
    return from.stamp === to.stamp ? { everything: false, earliest: null, latest: null } : null;
  }
  const scope =
    businesses === null
      ? sql``
      : sql`and (business is null or business = any(${businesses}::text[]))`;
  // An erasure's row changes everything for a reader of the business it erased, and for a
  // reader of every business; nothing for the others.
  const erased =
    businesses === null
      ? sql`true`
      : sql`erasure in (select e.id from business_erasures e
          where e.business = any(${businesses}::text[]))`;
  const result = await sql<{
    covered: boolean;
    everything: boolean | null;
    earliest: number | string | null;
    latest: number | string | null;
  }>`
    select
      exists(select 1 from projection_changes where seq = ${from.seq}
        and (extract(epoch from logged_at) * 1000000)::bigint = ${from.stamp}::bigint) as covered,
      bool_or(business is null and (erasure is null or ${erased})) as everything,
      floor(extract(epoch from min(earliest)) * 1000)::float8 as earliest,
      ceil(extract(epoch from max(latest)) * 1000)::float8 as latest
    from projection_changes
    where seq > ${from.seq} and seq <= ${to.seq} ${scope}`.execute(db);
  const row = result.rows[0];
  if (!row?.covered) return null;
  const instant = (value: number | string | null) => (value === null ? null : Number(value));
  return {
    everything: row.everything === true,
    earliest: instant(row.earliest),
    latest: instant(row.latest),
  };
}

/**
 * `changesSince`, remembering its last answers: the rows between two marks read never change
 * (they committed in the order they are numbered), so the many queries of one dashboard refresh
 * ask Postgres once.
 */
export function changesReader(
  db: Db,
  remembered = 256,
): (from: ChangeMark, to: ChangeMark, businesses: string[] | null) => Promise<NewFacts | null> {
  const answers = new Map<string, Promise<NewFacts | null>>();
  return (from, to, businesses) => {
    const key = JSON.stringify([from, to, businesses]);
    let answer = answers.get(key);
    if (!answer) {
      answer = changesSince(db, from, to, businesses);
      // A failed read is not remembered; the caller computes the whole answer meanwhile.
      answer.catch(() => answers.delete(key));
      if (answers.size >= remembered) answers.delete(answers.keys().next().value as string);
    } else answers.delete(key);
    answers.set(key, answer);
    return answer;
  };
}
