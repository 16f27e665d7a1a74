/**
 * Value parsers shared by the pg pool and PGlite, so rows look the same whichever engine runs.
 * `int8` becomes a number (counts and bigserial ids stay far below 2^53); `date` stays a
 * `YYYY-MM-DD` string because turning it into a JS Date would shift it by the local offset.
 */
export const PG_OID = { int8: 20, numeric: 1700, date: 1082 } as const;

export const pgParsers: Record<number, (value: string) => unknown> = {
  [PG_OID.int8]: (value) => Number(value),
  [PG_OID.numeric]: (value) => Number(value),
  [PG_OID.date]: (value) => value,
};
