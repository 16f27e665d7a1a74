import type pg from 'pg';

/** A running service under measurement, beside a pool on the same database for the raw figures. */
export interface Target {
  url: string;
  pid: number | undefined;
  headers: Record<string, string>;
  pool: pg.Pool;
  seconds: number;
}
