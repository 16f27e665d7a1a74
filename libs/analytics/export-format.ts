import type { AnalyticsQuery } from './parse/query-parser.ts';

/** The forms a query's rows can be exported in, besides the JSON answer. */
export type ExportFormat = 'text/csv' | 'application/x-ndjson';

/** What the query operations answer with, by Accept: JSON first, so it stays the default. */
export const ANSWER_TYPES = ['application/json', 'text/csv', 'application/x-ndjson'] as const;
export type AnswerType = (typeof ANSWER_TYPES)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  'text/csv': 'text/csv; charset=utf-8',
  'application/x-ndjson': 'application/x-ndjson',
};

export const EXTENSIONS: Record<ExportFormat, string> = {
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
};

type Row = Record<string, unknown>;

/**
 * The columns of an exported row, as the JSON answer's row has them: dimensions and metrics as
 * requested; with a comparison, `comparison.<metric>` then `change.<metric>` for each metric.
 */
export function exportColumns(query: AnalyticsQuery): string[] {
  const columns: string[] = [...query.dimensions, ...query.metrics];
  if (query.compare !== null) {
    columns.push(...query.metrics.map((name) => `comparison.${name}`));
    columns.push(...query.metrics.map((name) => `change.${name}`));
  }
  return columns;
}

const NEEDS_QUOTES = /[",\r\n]/;

/** One RFC 4180 field: null as nothing, quoted when it holds a comma, a quote or a line break. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Turns one line of the engine's answer into one exported line. */
export interface LineEncoder {
  header: string;
  line(text: string): string;
}

/** Columns whose stored "no label" value is answered as null: [position, stored value]. */
export type NoneLabels = ReadonlyArray<readonly [number, string]>;

/**
 * How an export reads the engine's rows straight from its output: the engine's format, the
 * column names (its first line), the last field of a line (the row count the export adds), and
 * the encoder of its lines; `skip` names that count's column, which is not exported.
 */
interface EngineReading {
  format: 'TabSeparatedWithNames' | 'JSONCompactEachRowWithNames';
  names(text: string): string[];
  last(text: string): string;
  encoder(names: string[], skip: string, none: NoneLabels): LineEncoder;
}

/**
 * CSV reads `TabSeparated`, whose lines mostly become CSV lines by swapping tabs for commas;
 * NDJSON reads compact JSON arrays (half the bytes of objects, and no keys to parse per row).
 */
export const ENGINE_READINGS: Record<ExportFormat, EngineReading> = {
  'text/csv': {
    format: 'TabSeparatedWithNames',
    names: (text) => text.split('\t').map((name) => tsvField(name) ?? ''),
    last: (text) => text.slice(text.lastIndexOf('\t') + 1),
    encoder: tsvCsvEncoder,
  },
  'application/x-ndjson': {
    format: 'JSONCompactEachRowWithNames',
    names: (text) => JSON.parse(text) as string[],
    last: (text) => String((JSON.parse(text) as unknown[]).at(-1)),
    encoder: ndjsonLineEncoder,
  },
};

/**
 * Lines of `JSONCompactEachRowWithNames` (value arrays in the order of `names`) as NDJSON: what
 * JSON.stringify writes for the row as an object, without making the object.
 */
function ndjsonLineEncoder(names: string[], skip: string, none: NoneLabels): LineEncoder {
  const kept = names.flatMap((name, at) => (name === skip ? [] : [at]));
  const keys = kept.map((at, i) => `${i === 0 ? '{' : ','}${JSON.stringify(names[at])}:`);
  return {
    header: '',
    line(text) {
      const values = JSON.parse(text) as unknown[];
      for (const [at, stored] of none) if (values[at] === stored) values[at] = null;
      let line = '';
      for (let i = 0; i < kept.length; i++) {
        line += keys[i] + (JSON.stringify(values[kept[i] as number]) ?? 'null');
      }
      return `${line}}\n`;
    },
  };
}

const TSV_ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  r: '\r',
  n: '\n',
  t: '\t',
  '0': '\0',
};

/** One field of `TabSeparated` output as its value; `\N` is null. */
export function tsvField(text: string): string | null {
  if (text === '\\N') return null;
  if (!text.includes('\\')) return text;
  return text.replace(/\\(.)/g, (_, c: string) => TSV_ESCAPES[c] ?? c);
}

/**
 * Lines of `TabSeparatedWithNames` as CSV, field for field as `rowEncoder` writes a row. A line
 * with nothing to quote or unescape (no quote, comma or backslash) is the CSV line once its tabs
 * are commas, which is most lines of a breakdown and costs a fraction of parsing it; the rest go
 * field by field. The engine prints numbers in TabSeparated as in JSON. `skip`, when present,
 * must be the last column.
 */
export function tsvCsvEncoder(names: string[], skip: string, none: NoneLabels): LineEncoder {
  const skips = names.at(-1) === skip;
  if (!skips && names.includes(skip)) throw new Error(`${skip} must be the last column`);
  const kept = skips ? names.length - 1 : names.length;
  // Stored "no label" values other than the empty field need each field looked at.
  const plain = none.every(([, stored]) => stored === '');
  const noneAt = new Map(none);
  return {
    header: `${names.slice(0, kept).map(csvField).join(',')}\r\n`,
    line(text) {
      const row = skips ? text.slice(0, text.lastIndexOf('\t')) : text;
      if (plain && !TSV_NEEDS_FIELDS.test(row)) return `${row.replaceAll('\t', ',')}\r\n`;
      const fields = row.split('\t');
      let line = '';
      for (let at = 0; at < kept; at++) {
        const value = tsvField(fields[at] as string);
        line += (at === 0 ? '' : ',') + csvField(value === noneAt.get(at) ? null : value);
      }
      return `${line}\r\n`;
    },
  };
}

const TSV_NEEDS_FIELDS = /[",\\]/;

/** Encodes rows one at a time; `header` is what comes before the first. */
export interface RowEncoder {
  header: string;
  row(row: Row): string;
}

export function rowEncoder(format: ExportFormat, query: AnalyticsQuery): RowEncoder {
  if (format === 'application/x-ndjson') {
    return { header: '', row: (row) => `${JSON.stringify(row)}\n` };
  }
  const columns = exportColumns(query);
  // A dotted column reads a member of the row's nested object (`comparison`, `change`).
  const readers = columns.map((column) => {
    const dot = column.indexOf('.');
    if (dot < 0) return (row: Row) => row[column];
    const [outer, inner] = [column.slice(0, dot), column.slice(dot + 1)];
    return (row: Row) => (row[outer] as Row | null | undefined)?.[inner];
  });
  return {
    header: `${columns.map(csvField).join(',')}\r\n`,
    row: (row) => `${readers.map((read) => csvField(read(row))).join(',')}\r\n`,
  };
}
