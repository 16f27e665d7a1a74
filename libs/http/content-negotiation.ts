import { AppError } from './errors.ts';

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';').map((piece) => piece.trim());
    const [type, subtype] = range.toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((piece) => piece.trim());
      if (name?.toLowerCase() !== 'q') continue;
      const weight = Number(value);
      // A weight that is no number says nothing to rely on: the range counts as not given.
      q = Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : Number.NaN;
    }
    if (!Number.isNaN(q)) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The weight Accept gives one media type: that of the most specific range naming it (RFC 9110 §12.5.1). */
function weightOf(offered: string, ranges: MediaRange[]): number {
  const [type, subtype] = offered.split('/');
  let best: { specificity: number; q: number } | undefined;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity > (best?.specificity ?? -1)) best = { specificity, q: range.q };
  }
  return best?.q ?? 0;
}

/**
 * Picks the media type to answer with from those `offered`, in the server's order of preference
 * (the first is the default: no Accept, or `*∕*`, gets it). The highest weight wins; ties go to
 * the earlier offer. Nothing acceptable is a 406 problem naming what the operation gives.
 */
export function negotiate<T extends string>(accept: string | undefined, offered: readonly T[]): T {
  const first = offered[0] as T;
  if (accept === undefined || accept.trim() === '') return first;
  const ranges = parseAccept(accept);
  // An Accept with nothing readable in it is treated as absent rather than as refusing all.
  if (ranges.length === 0) return first;
  let chosen: { type: T; q: number } | undefined;
  for (const type of offered) {
    const q = weightOf(type, ranges);
    if (q > 0 && q > (chosen?.q ?? 0)) chosen = { type, q };
  }
  if (chosen) return chosen.type;
  throw new AppError(
    'not_acceptable',
    `This operation answers with ${offered.join(', ')}; Accept names none of them.`,
  );
}
