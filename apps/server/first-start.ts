import fs from 'node:fs/promises';
import path from 'node:path';
import { DEMO_TOKEN_FILE } from '../../libs/auth/master-key.ts';
import { SCOPES } from '../../libs/auth/principal.ts';
import { issueToken } from '../../libs/auth/token.service.ts';
import type { Config } from '../../libs/config/config.ts';
import { projectionFreshness } from '../../libs/projection/projection-freshness.ts';
import { wakeProjector } from '../../libs/projection/projector-jobs.ts';
import type { Cairn } from './cairn.ts';
import { type DemoSummary, HISTORY_DAYS, loadDemoDataset } from './first-start-dataset.ts';

const CATCH_UP_DEADLINE_MS = 60_000;

/**
 * A first start is one on embedded engines with an empty (or missing) data directory. Checked
 * before the engines open, since opening them fills the directory.
 */
export async function isFirstStart(config: Config): Promise<boolean> {
  const embedded = config.embedded.postgres && config.embedded.clickhouse && config.role === 'all';
  if (!embedded) return false;
  const entries = await fs.readdir(config.dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries.length === 0;
}

/**
 * What the server says to the person who started it. Beside pretty logs on a terminal it is
 * stdout; elsewhere stdout carries JSON log lines for a collector, so the words go to stderr.
 */
export function say(text: string): void {
  if (text === '') return;
  (process.stdout.isTTY ? process.stdout : process.stderr).write(text);
}

/** Where the master key is (never the key itself), or how to get a token without one. */
export function masterKeyNotice(cairn: Pick<Cairn, 'masterKey' | 'config'>): string {
  const { masterKey, config } = cairn;
  if (masterKey.generated) {
    return `Generated a master key for the token endpoints and saved it in ${masterKey.file} (readable only by you).\n`;
  }
  if (masterKey.value !== undefined || config.role === 'projector') return '';
  return [
    'No master key: CAIRN_MASTER_KEY is unset, so the token endpoints (POST /api/v1/tokens) refuse every request.',
    'Issue a token with the CLI, pointed at the same DATABASE_URL:',
    '  npm run cli -- tokens create --name dashboards --scopes analytics:read,workflows:read --business <business>',
    'or set CAIRN_MASTER_KEY to a long random secret and restart.',
    '',
  ].join('\n');
}

const plural = (count: number | string, noun: string, nouns = `${noun}s`) =>
  `${count} ${Number(count) === 1 ? noun : nouns}`;

/**
 * On a first start: load the demo dataset, wait until the projector has carried it into
 * ClickHouse, issue a demo token and print what to try. On later starts: one summary line.
 */
export async function announceStart(
  cairn: Cairn,
  firstStart: boolean,
  out: (text: string) => void = say,
): Promise<void> {
  const db = cairn.engines.postgres.db;
  const masterKeyAt =
    cairn.masterKey.file ?? (cairn.masterKey.value ? 'CAIRN_MASTER_KEY' : undefined);
  const tokenFile = path.join(cairn.config.dataDir, DEMO_TOKEN_FILE);
  if (!firstStart) {
    const row = await db
      .selectFrom('tasks')
      .select((eb) => [
        eb.fn.countAll<string>().as('tasks'),
        eb.fn.count<string>('business').distinct().as('businesses'),
      ])
      .executeTakeFirstOrThrow();
    const demoToken = await fs.stat(tokenFile).then(
      () => tokenFile,
      () => undefined,
    );
    const parts = [
      `Cairn: ${plural(row.tasks, 'task')} in ${plural(row.businesses, 'business', 'businesses')}`,
      ...(cairn.config.role === 'projector'
        ? []
        : [`explorer ${cairn.url}/explore`, `docs ${cairn.url}/docs`]),
      ...(masterKeyAt ? [`master key in ${masterKeyAt}`] : []),
      ...(demoToken ? [`demo token in ${demoToken}`] : []),
    ];
    out(`${parts.join(' · ')}\n`);
    return;
  }

  out('First start: loading a demo dataset…\n');
  const now = new Date();
  const summary = await loadDemoDataset(
    { db, now: () => now, wakeProjector: wakeProjector(cairn.engines.queue) },
    now,
  );
  await projectionCaughtUp(cairn);
  const token = await issueToken(
    db,
    { name: 'demo', scopes: [...SCOPES], businesses: summary.businesses, kind: 'user' },
    new Date(),
  );
  await fs.writeFile(tokenFile, `${token.token}\n`, { mode: 0o600 });
  out(instructions(cairn.url, summary, masterKeyAt ?? 'CAIRN_MASTER_KEY', tokenFile));
}

async function projectionCaughtUp(cairn: Cairn): Promise<void> {
  const deadline = Date.now() + CATCH_UP_DEADLINE_MS;
  while (Date.now() < deadline) {
    const { lagMs } = await projectionFreshness(cairn.engines.postgres.db, new Date());
    if (lagMs === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function instructions(
  url: string,
  summary: DemoSummary,
  masterKeyAt: string,
  tokenFile: string,
): string {
  const query = JSON.stringify({
    metrics: ['tasks_created', 'tasks_completed', 'completion_rate', 'overdue_tasks'],
    dimensions: ['month', 'project'],
    period: 'last_90_days',
    business: summary.busiestDependency.business,
  });
  // The token stays in its file: the commands read it there, so no secret reaches the screen.
  const auth = `-H "Authorization: Bearer $(cat '${tokenFile}')"`;
  const { gid, dependents } = summary.busiestDependency;
  const businesses = summary.businesses.length === 1 ? 'business' : 'businesses';
  return [
    `Loaded ${summary.tasks} tasks with ${summary.edges} dependency edges across ${summary.businesses.length} ${businesses} (${summary.businesses.join(', ')}), ${summary.projects} projects and ${summary.assignees} assignees, covering the last ${HISTORY_DAYS} days.`,
    '',
    `  API         ${url}`,
    `  Explorer    ${url}/explore   (paste the demo token there)`,
    `  Docs        ${url}/docs   (OpenAPI: ${url}/openapi.json)`,
    `  Master key  ${masterKeyAt}   (token endpoints only)`,
    `  Demo token  ${tokenFile}`,
    `              all scopes, ${businesses} ${summary.businesses.join(', ')}`,
    '',
    'Monthly tasks created, completed, completion rate and overdue tasks per project:',
    `  curl -s -X POST ${url}/api/v1/query ${auth} -H 'Content-Type: application/json' -d '${query}'`,
    '',
    `The ${dependents} tasks that depend on task ${gid}:`,
    `  curl -s '${url}/api/v1/tasks/${gid}/dependents?limit=10&opt_fields=status,project,assignee' ${auth}`,
    '',
  ].join('\n');
}
