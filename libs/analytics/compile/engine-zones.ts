import { render, sql } from './sql/sql-value.ts';

/** The zones the running ClickHouse can load: one `time_zone` a row. */
export const ZONES_STATEMENT = render(sql`SELECT time_zone FROM system.time_zones`).sql;
