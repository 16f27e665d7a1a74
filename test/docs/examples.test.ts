import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';

const run = promisify(execFile);
const bin = (name: string) => path.resolve('node_modules/.bin', name);
const GENERATED = 'examples/generated/cairn-api.d.ts';

describe('examples/: a client generated from /openapi.json', () => {
  const cairn = useCairn({ businesses: ['acme'] });

  it('generates, type-checks and runs against the live server', async () => {
    // As `npm run example:client` does, from the running server's own document.
    await run(bin('openapi-typescript'), [`${cairn.url}/openapi.json`, '-o', GENERATED]);
    expect(await fs.readFile(GENERATED, 'utf8')).toContain('/api/v1/tasks/{gid}/dependents');

    await run(bin('tsc'), ['-p', 'examples/tsconfig.json', '--noEmit']).catch((error) => {
      throw new Error(`examples do not type-check:\n${error.stdout}`);
    });

    const { stdout } = await run(bin('tsx'), ['examples/tasks-and-query.ts'], {
      env: {
        ...process.env,
        CAIRN_URL: cairn.url,
        CAIRN_TOKEN: cairn.auth.Authorization.replace('Bearer ', ''),
        CAIRN_BUSINESS: 'acme',
      },
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^created [0-9a-f-]{36} \(Release 2\.0\) and 5 tasks that depend on it$/,
    );
    expect(lines[1]).toBe(
      'dependents in 3 pages: Write notes, Tag build, Update docs, Announce, Retro',
    );
    expect(lines[2]).toMatch(/^query: \d+ rows, \d+ tasks created$/);
    // The refresh by GET with If-None-Match: a 304, unless facts were projected in between.
    expect(lines.at(-1)).toMatch(/^refresh: (not modified \(304\)|changed \(200\))$/);

    // What the example wrote is really there.
    const rows = await cairn.db
      .selectFrom('tasks')
      .select('name')
      .where('business', '=', 'acme')
      .execute();
    expect(rows.map((row) => row.name).sort()).toEqual(
      ['Announce', 'Release 2.0', 'Retro', 'Tag build', 'Update docs', 'Write notes'].sort(),
    );
  }, 120_000);
});
