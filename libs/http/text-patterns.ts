/**
 * Regular expressions (ECMA-262, as JSON Schema's `pattern` reads them) for the comma-separated
 * lists query parameters take. Values are trimmed as `String.prototype.trim` does, which strips
 * exactly what `\s` matches, so the pattern and the parser agree on spaces around commas.
 */

/** `(open|in_progress|…)`, each word escaped. */
export function oneOf(words: readonly string[]): string {
  return group(words.map((word) => word.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')));
}

/**
 * One to `maxValues` values (unbounded when omitted), comma-separated, each matching `value`
 * once the spaces around it are trimmed; with `orEmpty`, the empty text too.
 */
export function commaList(
  value: string,
  { maxValues, orEmpty = false }: { maxValues?: number; orEmpty?: boolean } = {},
): string {
  const more = maxValues === undefined ? '*' : `{0,${maxValues - 1}}`;
  const list = `\\s*${value}\\s*(,\\s*${value}\\s*)${more}`;
  return orEmpty ? `^(${list})?$` : `^${list}$`;
}

/** A trimmed value of 1 to `maxLength` characters holding no comma (nor U+0000). */
export const trimmedValue = (maxLength: number): string =>
  `[^,\\s\\x00]([^,\\x00]{0,${maxLength - 2}}[^,\\s\\x00])?`;

/** Text without U+0000, which no input may hold (see validation.ts). */
export const NO_NUL = '^[^\\x00]*$';

/**
 * Whether `pattern` might match a text holding U+0000, read conservatively: it may unless it
 * spans the whole text (`^…$`, no top-level `|`) and nothing in it matches that character
 * (`.`, `\S`, `\W`, `\D`, `\P{…}`, an escape of it, or a negated class that does not name it).
 */
export function mayMatchNul(pattern: string): boolean {
  if (!pattern.startsWith('^') || !/(^|[^\\])\$$/.test(pattern)) return true;
  const nul = /^\\(x00|u0000|0)/;
  let depth = 0;
  for (let i = 1; i < pattern.length; i++) {
    const rest = pattern.slice(i);
    if (rest.startsWith('[')) {
      const end = classEnd(pattern, i);
      const body = pattern.slice(i + 1, end);
      const names = /\\(x00|u0000|0)/.test(body);
      if (body.startsWith('^') ? !names : names || /\\[SWDP]/.test(body)) return true;
      i = end;
    } else if (rest.startsWith('\\')) {
      if (nul.test(rest) || /^\\[SWDP]/.test(rest)) return true;
      i++;
    } else if (rest.startsWith('.') || (rest.startsWith('|') && depth === 0)) return true;
    else if (rest.startsWith('(')) depth++;
    else if (rest.startsWith(')')) depth--;
  }
  return false;
}

/** Where the class opened at `start` closes (escapes skipped; JS has no empty `[]` here). */
function classEnd(pattern: string, start: number): number {
  for (let i = start + 1; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return pattern.length;
}

/** Alternatives as one group (none needed for one). */
export const group = (alternatives: string[]): string =>
  alternatives.length === 1 ? (alternatives[0] as string) : `(${alternatives.join('|')})`;
const anyDigits = (n: number): string => (n === 0 ? '' : n === 1 ? '[0-9]' : `[0-9]{${n}}`);
const digitClass = (a: number, b: number): string => (a === b ? String(a) : `[${a}-${b}]`);

/** Regex alternatives matching exactly the digit strings from `low` to `high` (same length). */
export function digitRange(low: string, high: string): string[] {
  if (low.length === 0) return [''];
  const [a, b] = [Number(low[0]), Number(high[0])];
  const [restLow, restHigh, n] = [low.slice(1), high.slice(1), low.length - 1];
  if (a === b) return [`${a}${group(digitRange(restLow, restHigh))}`];
  const lowWhole = /^0*$/.test(restLow);
  const highWhole = /^9*$/.test(restHigh);
  const alternatives: string[] = [];
  if (!lowWhole) alternatives.push(`${a}${group(digitRange(restLow, '9'.repeat(n)))}`);
  const [from, to] = [lowWhole ? a : a + 1, highWhole ? b : b - 1];
  if (from <= to) alternatives.push(`${digitClass(from, to)}${anyDigits(n)}`);
  if (!highWhole) alternatives.push(`${b}${group(digitRange('0'.repeat(n), restHigh))}`);
  return alternatives;
}

// Months and days every year has: 1–28 of each month, 29–30 but in February, 31 in the long months.
export const COMMON_DAYS =
  '((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)';
// The last two digits of the leap years of a century, but its first.
const LEAP_ENDS = '(0[48]|[2468][048]|[13579][26])';

/**
 * A calendar date `YYYY-MM-DD` from `first` to `last` (whole years, four digits each), without
 * anchors: the days each month really has, February 29 in leap years only. What `format: date`
 * says, as a pattern, for tools that generate values from patterns and leave formats aside.
 */
export function calendarDate(first: string, last: string): string {
  const [from, to] = [Number(first), Number(last)];
  const isLeap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  // Centuries wholly in range: every leap year of theirs by one pattern; the edges year by year.
  const whole: string[] = [];
  const wholeFourth: string[] = [];
  const single: string[] = [];
  for (let century = Math.floor(from / 100); century <= Math.floor(to / 100); century++) {
    const prefix = String(century).padStart(2, '0');
    if (century * 100 >= from && century * 100 + 99 <= to) {
      (century % 4 === 0 ? wholeFourth : whole).push(prefix);
      continue;
    }
    for (
      let year = Math.max(from, century * 100);
      year <= Math.min(to, century * 100 + 99);
      year++
    ) {
      if (isLeap(year)) single.push(String(year).padStart(4, '0'));
    }
  }
  const leapYears = [
    ...(whole.length > 0 ? [`${group(whole)}${LEAP_ENDS}`] : []),
    ...(wholeFourth.length > 0 ? [`${group(wholeFourth)}(00|${LEAP_ENDS.slice(1)}`] : []),
    ...single,
  ];
  const years = group(digitRange(first, last));
  return leapYears.length === 0
    ? `${years}-${COMMON_DAYS}`
    : `(${years}-${COMMON_DAYS}|${group(leapYears)}-02-29)`;
}
