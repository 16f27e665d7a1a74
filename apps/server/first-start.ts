import fs from 'node:fs/promises';
import path from 'node:path';
import { SCOPES } from '../../libs/auth/principal.ts';
import { issueToken } from '../../libs/auth/token.service.ts';
import type { Config } from '../../libs/config/config.ts';
import { projectionFreshness } from '../../libs/projection/freshness.ts';
import { wakeProjector } from '../../libs/projection/projector-jobs.ts';
import type { Cairn } from './cairn.ts';
import { type DemoSummary, HISTORY_DAYS, loadDemoDataset } from './first-start-dataset.ts';

export const DEMO_TOKEN_FILE = 'demo.token';
const CATCH_UP_DEADLINE_MS = 60_000;

/**
 * A first start is one on embedded engines with an empty (or missing) data directory. Checked
 * before the engines open, since opening them fills the directory.
 */
export async function isFirstStart(config: Config): Promise<boolean> {
  const embedded = !config.databaseUrl && !config.clickhouseUrl && config.role === 'all';
  if (!embedded) return false;
  const entries = await fs.readdir(config.dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries.length === 0;
}

/**
 * On a first start: load the demo dataset, wait until the projector has carried it into
 * ClickHouse, issue a demo token and print what to try. On later starts: one summary line.
 */
export async function announceStart(
  cairn: Cairn,
  firstStart: boolean,
  out: (text: string) => void = (text) => process.stdout.write(text),
): Promise<void> {
  const db = cairn.engines.postgres.db;
  const masterKeyAt = cairn.masterKey.file ?? 'the CAIRN_MASTER_KEY environment variable';
  if (!firstStart) {
    const row = await db
      .selectFrom('tasks')
      .select((eb) => [
        eb.fn.countAll<string>().as('tasks'),
        eb.fn.count<string>('business').distinct().as('businesses'),
      ])
      .executeTakeFirstOrThrow();
    const docs = cairn.config.role === 'projector' ? '' : ` · docs ${cairn.url}/docs`;
    out(
      `Cairn: ${row.tasks} tasks in ${row.businesses} businesses${docs} · master key in ${masterKeyAt}\n`,
    );
    return;
  }

  out('First start: loading a demo dataset…\n');
  const now = new Date();
  const summary = await loadDemoDataset(
    { db, now: () => now, factsCommitted: wakeProjector(cairn.engines.queue) },
    now,
  );
  await projectionCaughtUp(cairn);
  const token = await issueToken(
    db,
    { name: 'demo', scopes: [...SCOPES], businesses: summary.businesses, kind: 'user' },
    new Date(),
  );
  const tokenFile = path.join(cairn.config.dataDir, DEMO_TOKEN_FILE);
  await fs.writeFile(tokenFile, `${token.token}\n`, { mode: 0o600 });
  out(instructions(cairn.url, summary, token.token, masterKeyAt, tokenFile));
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
  token: string,
  masterKeyAt: string,
  tokenFile: string,
): string {
  const query = JSON.stringify({
    metrics: ['tasks_created', 'tasks_completed', 'completion_rate'],
    dimensions: ['month', 'project'],
    period: 'last_90_days',
    business: summary.busiestDependency.business,
  });
  const auth = `-H 'Authorization: Bearer ${token}'`;
  const { gid, dependents } = summary.busiestDependency;
  return [
    `Loaded ${summary.tasks} tasks with ${summary.edges} dependency edges across ${summary.businesses.length} businesses (${summary.businesses.join(', ')}), ${summary.projects} projects and ${summary.assignees} assignees, covering the last ${HISTORY_DAYS} days.`,
    '',
    `  API         ${url}`,
    `  Docs        ${url}/docs   (OpenAPI: ${url}/openapi.json)`,
    `  Master key  ${masterKeyAt}   (token endpoints only)`,
    `  Demo token  ${token}`,
    `              all scopes, businesses ${summary.businesses.join(', ')}; also saved in ${tokenFile}`,
    '',
    'Monthly tasks created, completed and completion rate per project:',
    `  curl -s -X POST ${url}/api/v1/query ${auth} -H 'Content-Type: application/json' -d '${query}'`,
    '',
    `The ${dependents} tasks that depend on task ${gid}:`,
    `  curl -s '${url}/api/v1/tasks/${gid}/dependents?limit=10&opt_fields=status,project,assignee' ${auth}`,
    '',
  ].join('\n');
}
