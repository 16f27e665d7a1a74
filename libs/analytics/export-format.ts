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

/**
 * Encodes rows given as value arrays in the order of `names` (the engine's compact rows), the
 * same way `rowEncoder` encodes them as objects; `skip` names a column that is not exported.
 */
export function valuesEncoder(
  format: ExportFormat,
  names: string[],
  skip: string,
): { header: string; row(values: unknown[]): string } {
  const kept = names.flatMap((name, at) => (name === skip ? [] : [at]));
  if (format === 'application/x-ndjson') {
    // What JSON.stringify writes for the row as an object, without making the object.
    const keys = kept.map((at, i) => `${i === 0 ? '{' : ','}${JSON.stringify(names[at])}:`);
    return {
      header: '',
      row(values) {
        let line = '';
        for (let i = 0; i < kept.length; i++) {
          line += keys[i] + (JSON.stringify(values[kept[i] as number]) ?? 'null');
        }
        return `${line}}\n`;
      },
    };
  }
  return {
    header: `${kept.map((at) => csvField(names[at])).join(',')}\r\n`,
    row(values) {
      let line = '';
      for (let i = 0; i < kept.length; i++) {
        line += (i === 0 ? '' : ',') + csvField(values[kept[i] as number]);
      }
      return `${line}\r\n`;
    },
  };
}

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
