/** How far the projection has come, as the read side reports it (`data_as_of`, `stale_data`). */
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
