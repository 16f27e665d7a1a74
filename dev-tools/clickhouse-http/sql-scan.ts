// What the endpoint must know of a statement before chDB sees it: its first keyword, the
// `{name:Type}` placeholders it binds, the FORMAT it names, and whether a second statement
// follows a `;` (a server refuses multi-statements over HTTP; chDB's single-shot path runs them).

export interface ScannedSql {
  /** First word, upper-cased (`SELECT`, `INSERT`, …); '' when there is none. */
  keyword: string;
  /** Placeholders outside strings and comments: name → type. */
  placeholders: Map<string, string>;
  /** The format the statement names in its own FORMAT clause. */
  format: string | undefined;
  /** Offset of the `;` a second statement follows, if one does. */
  secondStatementAt: number | undefined;
}

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/y;

export function scanSql(sql: string): ScannedSql {
  const scanned: ScannedSql = {
    keyword: '',
    placeholders: new Map(),
    format: undefined,
    secondStatementAt: undefined,
  };
  let semicolon: number | undefined;
  let previous = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (/\s/.test(c)) {
      i += 1;
    } else if ((c === '-' && next === '-') || (c === '#' && (next === ' ' || next === '!'))) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else {
      if (semicolon !== undefined) {
        scanned.secondStatementAt = semicolon;
        return scanned;
      }
      const placeholder = c === '{' ? matchAt(PLACEHOLDER, sql, i) : null;
      const word = placeholder ? undefined : matchAt(WORD, sql, i)?.[0];
      if (c === "'" || c === '"' || c === '`') {
        i = quotedEnd(sql, i);
        previous = '';
      } else if (c === ';') {
        semicolon = i;
        i += 1;
      } else if (placeholder) {
        const [whole, name, type] = placeholder as unknown as [string, string, string];
        if (!scanned.placeholders.has(name)) scanned.placeholders.set(name, type);
        i += whole.length;
        previous = '';
      } else if (word) {
        if (!scanned.keyword) scanned.keyword = word.toUpperCase();
        i += word.length;
        if (previous === 'FORMAT') {
          // An INSERT's data follows its format name: nothing after it is SQL.
          if (scanned.keyword === 'INSERT') {
            scanned.format = word;
            return scanned;
          }
          // Elsewhere FORMAT ends the statement but for SETTINGS (`SELECT format FROM t` is a
          // column).
          if (/^\s*(;\s*$|$|SETTINGS\b)/i.test(sql.slice(i))) scanned.format = word;
        }
        previous = word.toUpperCase();
      } else {
        i += 1;
        previous = '';
      }
    }
  }
  return scanned;
}

function matchAt(pattern: RegExp, text: string, at: number): RegExpExecArray | null {
  pattern.lastIndex = at;
  return pattern.exec(text);
}

/** Index after the quoted string or identifier opening at `start` (backslash and doubling escapes). */
function quotedEnd(sql: string, start: number): number {
  const quote = sql[start];
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === '\\') i += 2;
    else if (sql[i] === quote && sql[i + 1] === quote) i += 2;
    else if (sql[i] === quote) return i + 1;
    else i += 1;
  }
  return sql.length;
}

export interface KillQuery {
  queryId: string;
  /** SYNC waits for the statement to stop; TEST only names it. */
  mode: 'SYNC' | 'ASYNC' | 'TEST';
  format: string | undefined;
}

const KILL =
  /^\s*KILL\s+QUERY\s+WHERE\s+query_id\s*=\s*(?:'((?:[^'\\]|\\.|'')*)'|\{\s*([A-Za-z_]\w*)\s*:\s*String\s*\})\s*(SYNC|ASYNC|TEST)?\s*(?:FORMAT\s+(\w+))?\s*;?\s*$/i;

/**
 * `KILL QUERY WHERE query_id = '…' [SYNC|ASYNC|TEST]`, the one form the endpoint answers itself.
 * `undefined` for anything else; `null` for another KILL QUERY form it cannot answer.
 */
export function parseKillQuery(
  sql: string,
  params: ReadonlyMap<string, string>,
): KillQuery | null | undefined {
  if (!/^\s*KILL\s+QUERY\b/i.test(sql)) return undefined;
  const match = KILL.exec(sql);
  if (!match) return null;
  const [, literal, param, mode, format] = match;
  const queryId =
    literal !== undefined
      ? unquote(literal)
      : params.get(param as string) !== undefined
        ? unescapeTsv(params.get(param as string) as string)
        : undefined;
  if (queryId === undefined) return null;
  return { queryId, mode: (mode?.toUpperCase() ?? 'ASYNC') as KillQuery['mode'], format };
}

const ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  '0': '\0',
  a: '\x07',
  v: '\v',
};

/** The text of a single-quoted SQL literal's inside. */
function unquote(inside: string): string {
  return unescapeTsv(inside.replaceAll("''", "'"));
}

/** ClickHouse's escaped-text reading: `\t`, `\n`, `\xHH`, …; any other `\c` is `c`. */
export function unescapeTsv(text: string): string {
  return text.replace(/\\(x[0-9A-Fa-f]{2}|[\s\S])/g, (_, sequence: string) =>
    sequence.length === 3
      ? String.fromCharCode(Number.parseInt(sequence.slice(1), 16))
      : (ESCAPES[sequence] ?? sequence),
  );
}

export interface PlainInsert {
  table: string;
  columns: string[] | undefined;
  format: RawInsertFormat;
}

export type RawInsertFormat =
  | 'JSONEachRow'
  | 'JSONCompactEachRow'
  | 'CSV'
  | 'CSVWithNames'
  | 'TSV'
  | 'TabSeparated'
  | 'TSVWithNames'
  | 'TabSeparatedWithNames';

const RAW_FORMATS = new Set<string>([
  'JSONEachRow',
  'JSONCompactEachRow',
  'CSV',
  'CSVWithNames',
  'TSV',
  'TabSeparated',
  'TSVWithNames',
  'TabSeparatedWithNames',
]);

const IDENT = '[A-Za-z0-9_]+';
const PLAIN_INSERT = new RegExp(
  `^\\s*INSERT\\s+INTO\\s+(?:TABLE\\s+)?(${IDENT}(?:\\.${IDENT})?)\\s*(?:\\(\\s*(${IDENT}(?:\\s*,\\s*${IDENT})*)\\s*\\))?\\s*FORMAT\\s+(\\w+)\\s*$`,
  'i',
);

/**
 * `INSERT INTO t [(a, b)] FORMAT X` with X a text format chDB takes as raw bytes: the statement
 * `@clickhouse/client` sends for an insert. Its data then goes to chDB as a buffer, and chDB
 * counts the rows it wrote (materialized views included), as a server's summary does.
 */
export function parsePlainInsert(sql: string): PlainInsert | undefined {
  const match = PLAIN_INSERT.exec(sql);
  if (!match || !RAW_FORMATS.has(match[3] as string)) return undefined;
  return {
    table: match[1] as string,
    columns: match[2]?.split(',').map((column) => column.trim()),
    format: match[3] as RawInsertFormat,
  };
}
