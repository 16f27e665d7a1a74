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
}
