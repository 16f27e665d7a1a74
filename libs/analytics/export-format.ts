import { DIMENSIONS } from './catalog/catalog.ts';
import type { AnalyticsQuery } from './parse/query-parser.ts';

/** The forms a query's rows can be exported in, besides the JSON answer. */
export type ExportFormat = 'text/csv' | 'application/x-ndjson';

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

/**
 * First characters a spreadsheet reads as the start of a formula (`=`, `+`, `-`, `@`, tab, CR):
 * a label starting with one is written with a leading `'`, which makes it text (OWASP "CSV
 * injection"). Only labels: a metric is a number, and `-2` must stay one.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function neutralLabel(value: unknown): unknown {
  return typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : value;
}

/** A column of labels: a dimension of type `string` (a time bucket never starts a formula). */
const isLabel = (column: string): boolean =>
  Object.hasOwn(DIMENSIONS, column) &&
  DIMENSIONS[column as keyof typeof DIMENSIONS].type === 'string';

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
  /** `neutralise`: CSV labels that would start a formula behind a `'` (CAIRN_CSV_FORMULA_ESCAPE). */
  encoder(names: string[], skip: string, none: NoneLabels, neutralise: boolean): LineEncoder;
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
 * with nothing to quote, unescape or neutralise (no quote, comma or backslash, no label starting
 * a formula) is the CSV line once its tabs are commas, which is most lines of a breakdown and
 * costs a fraction of parsing it; the rest go field by field. A label starting with a tab or a
 * CR holds a backslash in TabSeparated, so only `=`, `+`, `-` and `@` need looking for. The
 * engine prints numbers in TabSeparated as in JSON. `skip`, when present, must be the last column.
 */
export function tsvCsvEncoder(
  names: string[],
  skip: string,
  none: NoneLabels,
  neutralise = true,
): LineEncoder {
  const skips = names.at(-1) === skip;
  if (!skips && names.includes(skip)) throw new Error(`${skip} must be the last column`);
  const kept = skips ? names.length - 1 : names.length;
  // Stored "no label" values other than the empty field need each field looked at.
  const plain = none.every(([, stored]) => stored === '');
  const noneAt = new Map(none);
  const labels = neutralise ? names.slice(0, kept).map(isLabel) : [];
  const lastLabel = labels.lastIndexOf(true);
  /** Whether a label of the line starts with a formula's first character (not tab or CR). */
  const startsFormula = (row: string): boolean => {
    if (lastLabel < 0) return false;
    for (let at = 0, from = 0; ; at++) {
      if (labels[at] && isFormulaCode(row.charCodeAt(from))) return true;
      if (at === lastLabel) return false;
      from = row.indexOf('\t', from) + 1;
    }
  };
  return {
    header: `${names.slice(0, kept).map(csvField).join(',')}\r\n`,
    line(text) {
      const row = skips ? text.slice(0, text.lastIndexOf('\t')) : text;
      if (plain && !TSV_NEEDS_FIELDS.test(row) && !startsFormula(row)) {
        return `${row.replaceAll('\t', ',')}\r\n`;
      }
      const fields = row.split('\t');
      let line = '';
      for (let at = 0; at < kept; at++) {
        let value: unknown = tsvField(fields[at] as string);
        if (value === noneAt.get(at)) value = null;
        else if (labels[at]) value = neutralLabel(value);
        line += (at === 0 ? '' : ',') + csvField(value);
      }
      return `${line}\r\n`;
    },
  };
}

/** `=`, `+`, `-` or `@`: the fast path's test of a label's first character. */
const isFormulaCode = (code: number): boolean =>
  code === 0x3d || code === 0x2b || code === 0x2d || code === 0x40;

const TSV_NEEDS_FIELDS = /[",\\]/;

/** Encodes rows one at a time; `header` is what comes before the first. */
export interface RowEncoder {
  header: string;
  row(row: Row): string;
}

export function rowEncoder(
  format: ExportFormat,
  query: AnalyticsQuery,
  neutralise = true,
): RowEncoder {
  if (format === 'application/x-ndjson') {
    return { header: '', row: (row) => `${JSON.stringify(row)}\n` };
  }
  const columns = exportColumns(query);
  // A dotted column reads a member of the row's nested object (`comparison`, `change`).
  const readers = columns.map((column) => {
    const dot = column.indexOf('.');
    if (dot >= 0) {
      const [outer, inner] = [column.slice(0, dot), column.slice(dot + 1)];
      return (row: Row) => (row[outer] as Row | null | undefined)?.[inner];
    }
    if (neutralise && isLabel(column)) return (row: Row) => neutralLabel(row[column]);
    return (row: Row) => row[column];
  });
  return {
    header: `${columns.map(csvField).join(',')}\r\n`,
    row: (row) => `${readers.map((read) => csvField(read(row))).join(',')}\r\n`,
  };
}
