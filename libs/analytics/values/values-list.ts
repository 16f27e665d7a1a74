import type { CompiledQuery } from '../compile/query-compiler.ts';
import { compileValues, type ValuesRequest } from '../compile/values-compiler.ts';
import type { SourceName } from '../sources/rollups.ts';

/*
 * A type-ahead over a period no rollup answers (its ends are not on a rollup's slots: a day in
 * a zone other than UTC, for the labels only daily rollups keep) reads facts. Rather than read
 * them again at every keystroke, one statement lists every value of the period with its count,
 * and that list answers the keystrokes that follow, each prefix and limit picked from it here.
 */

/**
 * How long a kept list answers keystrokes once projected facts have moved on: a type-ahead may
 * miss, this long, a value that new facts brought in. While nothing is projected it holds.
 */
export const LIST_HOLD_MS = 10_000;

/**
 * Values a kept list holds at most: a dimension with more in the period is read per keystroke
 * (its list is kept empty, saying so, for as long as a full one would be).
 */
export const LIST_CAP = 10_000;

export interface ValueCount {
  value: string;
  facts: number;
}

/** Every value of the period, most used first, as the keystrokes pick from it. */
export interface ValueList {
  values: ValueCount[];
  /** Whether `values` holds them all (false: more than LIST_CAP, and `values` is empty). */
  complete: boolean;
  /** The time budget ran out while it was read: counts may be short (such a list is not kept). */
  partial: boolean;
  /** The projection watermark it was read at, and when (epoch ms). */
  watermark: string;
  computedAt: number;
  /** The answer's `data_as_of` then (ISO 8601). */
  dataAsOf: string;
}

/** The statement listing every value of the request's period (prefix and limit aside). */
export function compileValueList(request: ValuesRequest, source: SourceName): CompiledQuery {
  return compileValues({ ...request, prefix: '', limit: LIST_CAP + 1 }, source);
}

/** Whether a kept list still answers: nothing projected since, or kept a short while. */
export const listHolds = (list: ValueList, watermark: string, now: number): boolean =>
  list.watermark === watermark || now - list.computedAt < LIST_HOLD_MS;

/**
 * The values starting with `prefix` without regard to case, the most used first, at most
 * `limit`: what the statement with that prefix and limit answers. The list is in the
 * statement's order (count descending, then value), which picking keeps. Case is folded by
 * JavaScript here, by ClickHouse's `lowerUTF8` there: the two agree but for a few letters
 * outside the common alphabets.
 */
export function pickValues(list: ValueList, prefix: string, limit: number): ValueCount[] {
  const lowered = prefix.toLowerCase();
  const picked: ValueCount[] = [];
  for (const entry of list.values) {
    if (picked.length >= limit) break;
    if (entry.value.toLowerCase().startsWith(lowered)) picked.push(entry);
  }
  return picked;
}
