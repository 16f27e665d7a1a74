/**
 * Answer freshness: how far the projection has come, as an analytics answer reports it
 * (`data_as_of`, `stale_data`, the result cache's watermark). Only the shape the read side
 * consumes; where the figures come from is the projection's concern
 * (`libs/projection/projection-freshness.ts` reads them from Postgres).
 */
export interface Freshness {
  /** Every fact that happened before this instant is in ClickHouse. */
  dataAsOf: Date;
  /** How long the oldest unprojected fact has been waiting; 0 when nothing waits. */
  lagMs: number;
  /**
   * Names the state of the projected facts: it changes whenever a batch is fixed or committed,
   * or a rebuild is swapped in, and never returns to an earlier value; anything computed from
   * ClickHouse after reading it reflects at least the facts it names (the result cache's key).
   */
  watermark: string;
  /**
   * The last change to the projected facts that was logged with what it changed (null: none
   * logged yet). Read with the watermark: every change up to it is in ClickHouse.
   */
  changes?: ChangeMark | null;
}

/** A place in the projection's change log: its sequence number and the row's own time stamp. */
export interface ChangeMark {
  seq: number;
  /** Tells the row apart from one of another history under the same number (a restore). */
  stamp: string;
}

/**
 * What was projected between two marks for some businesses: the earliest and latest
 * `occurred_at` among their new facts (epoch ms, null when there are none), or `everything`:
 * any fact of any instant may have changed.
 */
export interface NewFacts {
  everything: boolean;
  earliest: number | null;
  latest: number | null;
}
