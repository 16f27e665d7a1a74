// A client generated from the live /openapi.json by openapi-typescript and used through
// openapi-fetch's defaults (`createClient<paths>()`, no media-type argument) types the answer of
// every operation: test/typed-client/every-operation.ts calls each one and reads its `data`
// without a cast, passes strict tsc, then runs against this server and sees real answers.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PROGRAM = path.join(ROOT, 'test', 'typed-client', 'every-operation.ts');
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

const TSCONFIG = {
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

/** Strict tsc over the folder: its complaints, empty when the program type-checks. */
async function typeCheck(dir: string): Promise<string> {
  const checked = await run(bin('tsc'), ['-p', dir]).catch((error) => error);
  return `${checked.stdout ?? ''}${checked.stderr ?? ''}`;
}

describe('a client generated from /openapi.json, used with no extra type argument', () => {
  // Set on every engine set: on servers no key is generated, and the token endpoints need one.
  const cairn = useCairn({ env: { CAIRN_MASTER_KEY: randomSecret() } });
  let dir: string;
  let program: string;
  beforeAll(async () => {
    // Under node_modules, so that the program resolves openapi-fetch as any project would.
    dir = path.join(
      ROOT,
      'node_modules',
      '.cache',
      `typed-client-${randomBytes(4).toString('hex')}`,
    );
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    await fs.writeFile(path.join(dir, 'package.json'), '{"type":"module"}');
    program = await fs.readFile(PROGRAM, 'utf8');
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('types every operation: the program passes strict tsc and gets real answers', async () => {
    // As a user does: `npx openapi-typescript $CAIRN_URL/openapi.json -o schema.ts`.
    await run(bin('openapi-typescript'), [
      `${cairn.url}/openapi.json`,
      '-o',
      path.join(dir, 'schema.ts'),
    ]);
    await fs.writeFile(path.join(dir, 'main.ts'), program);
    expect(await typeCheck(dir)).toBe('');

    const document = JSON.parse(await (await fetch(`${cairn.url}/openapi.json`)).text());
    const operations = Object.values(document.paths).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map((op) => op.operationId),
    );

    const { stdout } = await run(process.execPath, [bin('tsx'), path.join(dir, 'main.ts')], {
      env: {
        ...process.env,
        BASE_URL: cairn.url,
        MASTER_KEY: cairn.master.Authorization.slice('Bearer '.length),
        BUSINESS: 'typed-client',
      },
    });
    const seen = JSON.parse(stdout);
    // Every operation the document lists was called, and nothing else.
    expect(Object.keys(seen).sort()).toEqual(operations.sort());
    expect(seen).toEqual({
      getRoot: [302, '/explore'],
      getHealth: 'ok',
      getReadiness: ['ready', true],
      getMetrics: true,
      getOpenApi: ['3.1.0', document.info.title, Object.keys(document.paths).length],
      getDocs: true,
      getExplorer: true,
      createToken: ['service_account', ['typed-client'], true],
      listTokens: 'active',
      getOwnToken: [
        true,
        ['analytics:read', 'analytics:write', 'workflows:read', 'workflows:write'],
      ],
      createTask: ['task', 'open', 'landing'],
      getTask: 'Draft',
      updateTask: ['completed', true],
      listTasks: [3, ['Draft', 'Review', 'Ship']],
      addDependencies: true,
      listDependents: [
        ['Review', 1],
        ['Ship', 2],
      ],
      listDependencies: [
        ['Draft', 2],
        ['Review', 1],
      ],
      getCriticalPath: [[['Review', 'open']], 1],
      listBottlenecks: [
        ['Review', 1, 1],
        ['Ship', 0, 0],
      ],
      forecastCompletion: ['number', 'number', ['p50', 'p85', 'p95']],
      createView: ['Launch', true],
      listViews: ['Launch'],
      getView: true,
      replaceView: 'Launch, renamed',
      getViewAnswer: 2,
      getViewGauges: true,
      createViewEmbed: true,
      listViewEmbeds: ['active'],
      getEmbedPage: true,
      getEmbedAnswer: 2,
      revokeViewEmbed: 204,
      deleteView: 204,
      removeDependency: 204,
      deleteTask: 204,
      runQuery: [
        [
          ['landing', 1, 0],
          ['launch', 2, 0.5],
        ],
        2,
        1 / 3,
        'all_time',
      ],
      runQueryBatch: [
        [200, 2],
        [404, null],
        [200, 2],
      ],
      getQuery: [
        ['landing', 1],
        ['launch', 2],
      ],
      exportQuery: [
        'project,tasks_created,tasks_completed,completion_rate',
        'landing,1,0,0',
        'launch,2,1,0.5',
      ],
      getQueryExport: ['landing', 'launch'],
      getQueryCatalog: true,
      listDimensionValues: ['launch', 'landing'],
      revokeToken: 204,
      eraseBusiness: true,
      getBusinessErasure: 'done',
    });
    // What the program erased is gone.
    const left = await cairn.db
      .selectFrom('tasks')
      .select('gid')
      .where('business', '=', 'typed-client')
      .execute();
    expect(left).toEqual([]);
  }, 600_000);

  it('has teeth: a wrong type for an answer member fails strict tsc', async () => {
    const loose = program.replace(
      'const completed: number | null | undefined = data.metadata.totals?.tasks_completed;',
      'const completed: string | undefined = data.metadata.totals?.tasks_completed;',
    );
    expect(loose).not.toBe(program);
    await fs.writeFile(path.join(dir, 'main.ts'), loose);
    expect(await typeCheck(dir)).toMatch(/main\.ts\(\d+,\d+\): error TS2322/);
  }, 600_000);

  it('refuses in its body type what the service refuses: period with date_range, a date_range of another type, a bare filter', async () => {
    // Each call must fail to type-check: an unused @ts-expect-error is itself an error.
    const refused = [
      "{ metrics: ['tasks_created'], period: 'last_7_days', date_range: ['2026-01-01', '2026-01-31'] }",
      "{ metrics: ['tasks_created'], date_range: 42 }",
      "{ metrics: ['tasks_created'], filters: [{ dimension: 'project' }] }",
    ];
    const accepted = "{ metrics: ['tasks_created'], date_range: ['2026-01-01', '2026-01-31'] }";
    const bodies = `import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';

const client = createClient<paths>({});
${refused.map((body) => `// @ts-expect-error\nawait client.POST('/api/v1/query', { body: ${body} });`).join('\n')}
await client.POST('/api/v1/query', { body: ${accepted} });
`;
    await fs.writeFile(path.join(dir, 'main.ts'), bodies);
    expect(await typeCheck(dir)).toBe('');
  }, 600_000);
});
