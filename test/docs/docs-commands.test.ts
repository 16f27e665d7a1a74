import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../apps/server/first-start-dataset.ts';
import { DEMO_TOKEN_FILE } from '../../libs/auth/master-key.ts';
import { SCOPES } from '../../libs/auth/principal.ts';
import { issueToken } from '../../libs/auth/token.service.ts';
import { projectionFreshness } from '../../libs/projection/projection-freshness.ts';
import { wakeProjector } from '../../libs/projection/projector-jobs.ts';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { tempDir, waitFor } from '../support/engines.ts';
import { headingAnchors, type ShellBlock, shellBlocks } from '../support/markdown-shell-blocks.ts';

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

// The README opens with the two commands a newcomer types. They are not run here: `npm ci`
// would rewrite the node_modules every test shares, and `npm test` is this suite. What they do
// is run all the same: `.ci/run` installs with `npm ci` and runs `npm test` on every engine set,
// and test/lifecycle/first-start.test.ts starts apps/server/main.ts, which is what `npm start` runs.
const OPENING_COMMANDS = 'npm ci && npm start\nnpm ci && npm test';

/** The blocks this test runs: every block but the README's opening one and those marked. */
function runnable(file: string): ShellBlock[] {
  return blocksOf(file).filter(
    (block) => !block.notRun && !(file === 'README.md' && block.code === OPENING_COMMANDS),
  );
}

/** What each block printed, by the line of its opening fence. */
function outputsByBlock(stdout: string): Map<number, string> {
  const outputs = new Map<number, string>();
  let from = 0;
  for (const match of stdout.matchAll(/^@@done (\d+)$/gm)) {
    outputs.set(Number(match[1]), stdout.slice(from, match.index));
    from = (match.index ?? 0) + match[0].length;
  }
  return outputs;
}

/** The JSON answers among a block's output lines that carry a `data` array. */
function answersWithData(output: string): Array<{ data: unknown[] }> {
  const answers: Array<{ data: unknown[] }> = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line);
      if (Array.isArray(parsed?.data)) answers.push(parsed);
    } catch {
      // Not JSON: a CSV line, a header, a status code.
    }
  }
  return answers;
}

/** Every number a row holds, in its own members and in `comparison`. */
function numbersOf(row: unknown, member?: string): number[] {
  if (row === null || typeof row !== 'object') return [];
  const source = member ? (row as Record<string, unknown>)[member] : row;
  if (source === null || typeof source !== 'object') return [];
  return Object.values(source).filter((value): value is number => typeof value === 'number');
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
    // Each answer on a line of its own, so that the test can read the answers one by one.
    'curl() { command curl --fail-with-body --show-error "$@" && echo; }',
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
  it('README.md says what Cairn is in three lines, then gives the two commands and what they need', () => {
    const text = textOf('README.md');
    const fence = '```';
    const opening = `${fence}sh\n${OPENING_COMMANDS}\n${fence}\n`;
    const [title, blank, ...about] = text.slice(0, text.indexOf(opening)).trimEnd().split('\n');
    expect([title, blank]).toEqual(['# Cairn', '']);
    expect(about).toHaveLength(3);
    expect(about.every((line) => line.trim().length > 40)).toBe(true);
    // Then what a fresh machine needs, before the tour.
    const next = text.slice(text.indexOf(opening) + opening.length, text.indexOf('## First start'));
    for (const needed of ['Node.js 20', '22', '24', 'Postgres', 'Redis', 'Chromium', 'promtool'])
      expect(next, needed).toContain(needed);
    expect(next).toMatch(/about 15 minutes/);
    expect(text.indexOf('## First start')).toBeLessThan(text.indexOf('## A two-minute tour'));
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('the opening commands are what CI and the first-start test run', async () => {
    const pkg = JSON.parse(await fs.readFile('package.json', 'utf8'));
    expect(pkg.scripts.start).toBe('tsx apps/server/main.ts');
    expect(await fs.readFile('test/lifecycle/first-start.test.ts', 'utf8')).toContain(
      'apps/server/main.ts',
    );
    const ci = await fs.readFile('.ci/run', 'utf8');
    expect(ci).toMatch(/the README's test command/);
    expect(ci).toMatch(/\bnpm test\b/);
    expect(ci).toMatch(/\bnpm ci\b/);
  });

  it('master-key commands read CAIRN_MASTER_KEY, else the key file a first start wrote', () => {
    const blocks = DOCUMENTS.flatMap(blocksOf).filter((block) => block.code.includes('master.key'));
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      expect(block.code, `${block.file}:${block.line}`).toContain(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template.
        '${CAIRN_MASTER_KEY:-$(cat "$DATA_DIR/master.key")}',
      );
    }
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

  it('docs/configuration.md lists every variable libs/config/ reads', async () => {
    const files = await fs.readdir('libs/config', { recursive: true, withFileTypes: true });
    const sources = files
      .filter((file) => file.isFile() && file.name.endsWith('.ts'))
      .map((file) => fs.readFile(path.join(file.parentPath, file.name), 'utf8'));
    const source = (await Promise.all(sources)).join('\n');
    // A section's title (`title: 'HTTP'`) is no variable.
    const read = [...source.matchAll(/(?<!title: )'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)'/g)].map(
      (m) => m[1],
    );
    expect(read.length).toBeGreaterThan(30);
    const listed = new Set(
      [...textOf('docs/configuration.md').matchAll(/^\| `([A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]),
    );
    expect([...new Set(read)].filter((name) => !listed.has(name))).toEqual([]);
    expect([...listed].filter((name) => !read.includes(name))).toEqual([]);
  });
});

describe('README.md and docs/: every command answers from the demo data', () => {
  // The master key as a server deployment has it: in the environment, with no key file.
  const masterKey = randomSecret();
  const cairn = useCairn({ issueToken: false, env: { CAIRN_MASTER_KEY: masterKey } });
  let env: Record<string, string>;

  beforeAll(async () => {
    // What a first start leaves: the demo data, projected, and its token in DATA_DIR.
    const now = new Date();
    const demo = await loadDemoDataset(
      { db: cairn.db, now: () => now, wakeProjector: wakeProjector(cairn.engines.queue) },
      now,
    );
    await waitFor(async () => (await projectionFreshness(cairn.db, new Date())).lagMs === 0, {
      timeoutMs: 120_000,
    });
    const token = await issueToken(
      cairn.db,
      { name: 'demo', scopes: [...SCOPES], businesses: demo.businesses, kind: 'user' },
      new Date(),
    );
    const dataDir = await tempDir('cairn-docs-');
    await fs.writeFile(path.join(dataDir, DEMO_TOKEN_FILE), `${token.token}\n`);
    // Not port 8080: the commands must follow CAIRN_URL wherever the server listens.
    expect(new URL(cairn.url).port).not.toBe('8080');
    env = { CAIRN_URL: cairn.url, DATA_DIR: dataDir, CAIRN_MASTER_KEY: masterKey };
  }, 240_000);

  it.each(DOCUMENTS)(
    '%s',
    async (file) => {
      const expected = runnable(file).map((block) => block.line);
      const { stdout, done } = await runDocument(file, env);
      expect(done).toEqual(expected);
      // Every answer with rows has some, and they say something: a number that is not 0 (and
      // so does the other period of a comparison).
      let answers = 0;
      for (const [line, output] of outputsByBlock(stdout)) {
        for (const answer of answersWithData(output)) {
          answers++;
          const where = `${file}:${line} ${output.slice(0, 300)}`;
          expect(answer.data.length, where).toBeGreaterThan(0);
          if (!('metadata' in answer)) continue;
          expect(
            answer.data.flatMap((row) => numbersOf(row)).some((n) => n !== 0),
            where,
          ).toBe(true);
          if (answer.data.some((row) => numbersOf(row, 'comparison').length > 0)) {
            const before = answer.data.flatMap((row) => numbersOf(row, 'comparison'));
            expect(
              before.some((n) => n !== 0),
              where,
            ).toBe(true);
          }
        }
      }
      expect(answers, `${file}: answers with rows`).toBeGreaterThanOrEqual(
        { 'README.md': 2, 'docs/api.md': 1, 'docs/analytics.md': 4 }[file] ?? 0,
      );
      // Spot checks that the answers are the ones the text describes.
      if (file === 'README.md') {
        expect(stdout).toMatch(/"tasks_created"/);
        expect(stdout).toMatch(/"depth":2/);
      }
      if (file === 'docs/api.md') {
        expect(stdout).toMatch(/"name":"reporting"/);
        expect(stdout).toMatch(/"name":"Ship the plan"/);
        expect(stdout).toMatch(/^dependents in 3 pages: /m);
      }
      if (file === 'docs/analytics.md') {
        expect(stdout).toMatch(/"totals":\{"tasks_completed"/);
        expect(stdout).toMatch(/\{"value":"mobile-app","facts":[1-9]/);
        expect(stdout).toMatch(/^billing,open,[1-9]/m);
      }
    },
    180_000,
  );

  it('runs blocks in README.md, docs/api.md and docs/analytics.md', () => {
    for (const file of ['README.md', 'docs/api.md', 'docs/analytics.md']) {
      expect(runnable(file).length, file).toBeGreaterThan(1);
    }
  });
});
