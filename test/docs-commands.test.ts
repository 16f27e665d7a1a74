import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { useCairn } from './support/cairn.ts';
import { tempDir } from './support/engines.ts';
import { http } from './support/http.ts';
import { headingAnchors, type ShellBlock, shellBlocks } from './support/markdown-shell-blocks.ts';

const run = promisify(execFile);

const DOCUMENTS = [
  'README.md',
  ...(await fs.readdir('docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const texts = new Map(
  await Promise.all(
    DOCUMENTS.map(async (file) => [file, await fs.readFile(file, 'utf8')] as const),
  ),
);
function textOf(file: string): string {
  const found = texts.get(file);
  if (found === undefined) throw new Error(`${file} is not one of the documents`);
  return found;
}
const blocksOf = (file: string): ShellBlock[] => shellBlocks(file, textOf(file));

// The README opens with the two commands a newcomer types. They are not run here: `npm install`
// would rewrite the node_modules every test shares, and `npm test` is this suite. What they do
// is run all the same: `.ci/run` installs with `npm ci` and runs `npm test` on every engine set,
// and test/first-start.test.ts starts apps/server/main.ts, which is what `npm start` runs.
const OPENING_COMMANDS = '```sh\nnpm install && npm start\nnpm install && npm test\n```\n';

/** The blocks this test runs: every block but the README's opening one and those marked. */
function runnable(file: string): ShellBlock[] {
  return blocksOf(file).filter(
    (block) => !block.notRun && !(file === 'README.md' && block.line === 1),
  );
}

/**
 * Runs a document's blocks in order in one bash, as a reader pastes them into one terminal, with
 * curl failing on any HTTP error. Each block that completes prints a marker.
 */
async function runDocument(
  file: string,
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string; done: number[] }> {
  const script = [
    'set -euo pipefail',
    // A 4xx or 5xx is a failed command, not a page of JSON the test would have to read.
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    ...runnable(file).map((block) => `${block.code}\nprintf '\\n@@done %d\\n' ${block.line}`),
  ].join('\n');
  const result = await run('bash', ['-c', script], {
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error) => {
    throw new Error(
      `${file}: a block failed (exit ${error.code})\n--- stdout ---\n${error.stdout}\n--- stderr ---\n${error.stderr}`,
    );
  });
  const done = [...result.stdout.matchAll(/^@@done (\d+)$/gm)].map((match) => Number(match[1]));
  return { ...result, done };
}

describe('README.md and docs/: their shape', () => {
  it('README.md opens with the two commands and stays within 250 lines', () => {
    expect(textOf('README.md').startsWith(OPENING_COMMANDS)).toBe(true);
    expect(textOf('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('the opening commands are what CI and the first-start test run', async () => {
    const pkg = JSON.parse(await fs.readFile('package.json', 'utf8'));
    expect(pkg.scripts.start).toBe('tsx apps/server/main.ts');
    expect(await fs.readFile('test/first-start.test.ts', 'utf8')).toContain('apps/server/main.ts');
    const ci = await fs.readFile('.ci/run', 'utf8');
    expect(ci).toMatch(/the README's test command/);
    expect(ci).toMatch(/\bnpm test\b/);
    expect(ci).toMatch(/\bnpm ci\b/);
  });

  it('every block left unrun says why, and is valid shell', async () => {
    const marked = DOCUMENTS.flatMap((file) => blocksOf(file).filter((block) => block.notRun));
    for (const block of marked) {
      expect(block.notRun?.length, `${block.file}:${block.line}`).toBeGreaterThan(20);
      await run('bash', ['-n', '-c', block.code]).catch((error) => {
        throw new Error(`${block.file}:${block.line}: ${error.stderr}`);
      });
    }
    // Skips are for what a test machine cannot have (a ClickHouse server, a Docker engine).
    const ran = DOCUMENTS.flatMap(runnable);
    expect(ran.length).toBeGreaterThan(3 * marked.length);
  });

  it('links between the documents reach a file and a heading', async () => {
    for (const file of DOCUMENTS) {
      for (const [, target, anchor] of textOf(file).matchAll(
        /\]\(([^)#\s]*\.md)?(?:#([^)\s]+))?\)/g,
      )) {
        if (target === undefined && anchor === undefined) continue;
        const targetFile = target ? path.join(path.dirname(file), target) : file;
        expect(DOCUMENTS, `${file} links to ${target}`).toContain(targetFile);
        if (anchor) {
          expect(
            headingAnchors(textOf(targetFile)),
            `${file} links to ${targetFile}#${anchor}`,
          ).toContain(anchor);
        }
      }
    }
  });

  it('docs/configuration.md lists every variable libs/config/config.ts reads', async () => {
    const source = await fs.readFile('libs/config/config.ts', 'utf8');
    const read = [...source.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)'/g)].map((m) => m[1]);
    expect(read.length).toBeGreaterThan(30);
    const listed = new Set(
      [...textOf('docs/configuration.md').matchAll(/^\| `([A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]),
    );
    expect([...new Set(read)].filter((name) => !listed.has(name))).toEqual([]);
    expect([...listed].filter((name) => !read.includes(name))).toEqual([]);
  });
});

describe('README.md and docs/: every command runs against a live server', () => {
  const BUSINESSES = ['acme', 'globex', 'initech', 'biz-0', 'biz-1', 'biz-2'];
  // Set on servers too, where no key is generated: the token example reads it from DATA_DIR.
  const masterKey = randomBytes(24).toString('base64url');
  const cairn = useCairn({ businesses: BUSINESSES, env: { CAIRN_MASTER_KEY: masterKey } });
  let env: Record<string, string>;

  beforeAll(async () => {
    // What a first start leaves in DATA_DIR: the master key and a demo token, each in its file.
    const dataDir = await tempDir('cairn-docs-');
    await fs.writeFile(path.join(dataDir, 'master.key'), masterKey);
    await fs.writeFile(
      path.join(dataDir, 'demo.token'),
      cairn.auth.Authorization.replace('Bearer ', ''),
    );
    // A task with a dependent, for the tour's dependents walk to find.
    const task = async (name: string) =>
      (
        await http(cairn.url, 'POST', '/api/v1/tasks', {
          headers: cairn.auth,
          body: { business: 'acme', name },
        })
      ).body.data.gid as string;
    const first = await task('Draft the release');
    const second = await task('Ship the release');
    const linked = await http(cairn.url, 'POST', `/api/v1/tasks/${second}/dependencies`, {
      headers: cairn.auth,
      body: { dependencies: [first] },
    });
    expect(linked.status).toBe(200);
    // Not port 8080: the commands must follow CAIRN_URL wherever the server listens.
    expect(new URL(cairn.url).port).not.toBe('8080');
    env = { CAIRN_URL: cairn.url, DATA_DIR: dataDir };
  }, 120_000);

  it.each(DOCUMENTS)(
    '%s',
    async (file) => {
      const expected = runnable(file).map((block) => block.line);
      const { stdout, done } = await runDocument(file, env);
      expect(done).toEqual(expected);
      // Spot checks that the answers are the ones the text describes.
      if (file === 'README.md') expect(stdout).toMatch(/"tasks_created"/);
      if (file === 'docs/api.md') {
        expect(stdout).toMatch(/"name":"reporting"/);
        expect(stdout).toMatch(/"name":"Ship the plan"/);
        expect(stdout).toMatch(/^dependents in 3 pages: /m);
      }
      if (file === 'docs/analytics.md') expect(stdout).toMatch(/"totals":\{"tasks_completed"/);
    },
    180_000,
  );

  it('runs blocks in README.md, docs/api.md and docs/analytics.md', () => {
    for (const file of ['README.md', 'docs/api.md', 'docs/analytics.md']) {
      expect(runnable(file).length, file).toBeGreaterThan(1);
    }
  });
});
