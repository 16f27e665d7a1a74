// A client generated from the live /openapi.json types every answer of /query: a small program
// reads data, metadata and warnings without a cast and passes strict tsc, then runs for real.
// tsc alone takes minutes on a busy 2-core machine: the limits are generous.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCairn } from './support/cairn.ts';
import { http } from './support/http.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');

// Under node_modules so that the program resolves openapi-fetch as any project would.
const PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';

// JSON answers only: the query operations also answer CSV and NDJSON, as text.
const client = createClient<paths, 'application/json' | 'application/problem+json'>({
  baseUrl: process.env.BASE_URL,
});
const { data, error } = await client.POST('/api/v1/query', {
  headers: { Authorization: \`Bearer \${process.env.TOKEN}\` },
  body: {
    metrics: ['tasks_created', 'completion_rate'],
    dimensions: ['day'],
    period: 'last_7_days',
    compare: 'previous_period',
    include: ['totals'],
  },
});
if (error) throw new Error(JSON.stringify(error));
const days: string[] = data.data.map((row) => row.day ?? '');
const created: number = data.data.reduce((sum, row) => sum + (row.tasks_created ?? 0), 0);
const rate: number | null | undefined = data.data[0]?.completion_rate;
const before: number | null | undefined = data.data[0]?.comparison?.tasks_created;
const change: number | null | undefined = data.data[0]?.change?.tasks_created;
const total: number = data.metadata.total_rows;
const from: string = data.metadata.query.period.from;
const incomplete: string | null = data.metadata.incomplete_from;
const cut: boolean | undefined = data.metadata.comparison?.cut_at_elapsed;
const totals: number | null | undefined = data.metadata.totals?.completion_rate;
const codes: string[] = (data.warnings ?? []).map((warning) => warning.code);
console.log(JSON.stringify({ days, created, rate, before, change, total, from, incomplete, cut, totals, codes }));
`;

describe('a client generated from /openapi.json', () => {
  const cairn = useCairn();
  let dir: string;
  beforeAll(async () => {
    dir = path.join(
      ROOT,
      'node_modules',
      '.cache',
      `openapi-client-${randomBytes(4).toString('hex')}`,
    );
    await fs.mkdir(dir, { recursive: true });
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('types the query answer: strict tsc passes without casts, and the program runs', async () => {
    const doc = await http(cairn.url, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    await fs.writeFile(path.join(dir, 'schema.ts'), astToString(await openapiTS(doc.body)));
    await fs.writeFile(path.join(dir, 'main.ts'), PROGRAM);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        allowImportingTsExtensions: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(ROOT, 'node_modules', '@types')],
      },
      files: ['main.ts'],
    };
    await fs.writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    await fs.writeFile(path.join(dir, 'package.json'), '{"type":"module"}');
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', dir]).catch((e) => e);
    expect(`${checked.stdout ?? ''}${checked.stderr ?? ''}`).toBe('');

    const token = cairn.auth.Authorization.slice('Bearer '.length);
    const tsx = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
    const { stdout } = await run(process.execPath, [tsx, path.join(dir, 'main.ts')], {
      env: { ...process.env, BASE_URL: cairn.url, TOKEN: token },
    });
    const answer = JSON.parse(stdout);
    expect(answer.days).toHaveLength(7);
    expect(answer).toMatchObject({ created: 0, total: 7, cut: true, codes: [] });
  }, 600_000);

  it('the loose program fails strict tsc: the types have teeth', async () => {
    await fs.writeFile(
      path.join(dir, 'main.ts'),
      PROGRAM.replace(
        'const total: number = data.metadata.total_rows;',
        'const total: string = data.metadata.total_rows;',
      ),
    );
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', dir]).catch((e) => e);
    expect(checked.stdout).toMatch(/total_rows|Type 'number' is not assignable to type 'string'/);
  }, 600_000);
});
