import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../libs/config/config.ts';
import { type BackupManifest, MANIFEST_FILE } from '../../libs/lifecycle/backup-manifest.ts';
import { startTestCairn, type TestCairn, unlimited } from '../support/cairn.ts';
import { runCli } from '../support/cli-process.ts';
import { tempDir, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { expectRollupsMatchFacts, projectionTotals } from '../support/projection-invariants.ts';

const PROJECTS = ['alpha', 'beta', 'gamma'];

/** The CLI on embedded engines in `dataDir`, whatever engine set this run uses. */
const cli = (dataDir: string, ...args: string[]) => runCli(dataDir, args);

const failureOf = (running: Promise<unknown>) =>
  running.then(
    () => undefined,
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

/** The answers compared between the restored installation and its own Postgres. */
const QUERIES = {
  created: { metrics: ['tasks_created'], dimensions: ['project'], period: 'last_7_days' },
  completed: { metrics: ['tasks_completed'], dimensions: ['project'], period: 'last_7_days' },
  open: { metrics: ['open_tasks'], dimensions: ['project'], period: 'today' },
};

/** What each query must answer, worked out from the tasks alone (each completed at most once). */
async function expectedAnswers(cairn: TestCairn) {
  const rows = await sql<{ project: string; created: string; completed: string; open: string }>`
    select project,
           count(*) as created,
           count(*) filter (where status = 'completed') as completed,
           count(*) filter (where status in ('open', 'in_progress')) as open
    from tasks where business = 'acme' group by project order by project`.execute(cairn.db);
  const column = (name: 'created' | 'completed' | 'open', metric: string) =>
    rows.rows
      .filter((row) => Number(row[name]) > 0)
      .map((row) => ({ project: row.project, [metric]: Number(row[name]) }));
  return {
    created: column('created', 'tasks_created'),
    completed: column('completed', 'tasks_completed'),
    open: column('open', 'open_tasks'),
  };
}

async function answers(cairn: TestCairn, auth: { Authorization: string }) {
  const out: Record<string, unknown> = {};
  for (const [name, query] of Object.entries(QUERIES)) {
    const res = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { ...query, business: 'acme' },
      headers: auth,
    });
    expect(res.status, name).toBe(200);
    const byProject = (a: { project: string }, b: { project: string }) =>
      a.project.localeCompare(b.project);
    // Zero rows of a flow metric may be answered or left out; only counted projects compare.
    out[name] = (res.body.data as Array<Record<string, unknown> & { project: string }>)
      .filter((row) => Object.entries(row).some(([key, value]) => key !== 'project' && value !== 0))
      .sort(byProject);
  }
  return out;
}

describe('backup under writes, restore into a new data directory', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  }, 120_000);

  it('restores the installation as it was at the backup, and the projector resumes exactly once', async () => {
    // Embedded engines whatever the run's mode: the backup copies PGlite and chDB.
    const source = await startTestCairn({
      env: { DATABASE_URL: '', REDIS_URL: '', CAIRN_MASTER_KEY: '' },
      rateLimits: unlimited(),
    });
    cleanup.push(() => source.close());
    const scratch = await tempDir('cairn-backup-');
    cleanup.push(() => fs.rm(scratch, { recursive: true, force: true }));
    const backupDir = path.join(scratch, 'backup');

    // Writers: each creates tasks and completes every other one, until told to stop.
    const acknowledged: string[] = [];
    /** Tasks whose creation was asked for only once the backup had finished. */
    const startedAfter: string[] = [];
    let backupDone = false;
    let stop = false;
    let sequence = 0;
    const writer = async () => {
      while (!stop) {
        const n = sequence++;
        const late = backupDone;
        const created = await http(source.url, 'POST', '/api/v1/tasks', {
          body: { business: 'acme', name: `task ${n}`, project: PROJECTS[n % PROJECTS.length] },
          headers: source.auth,
        });
        expect(created.status).toBe(201);
        const gid = created.body.data.gid as string;
        acknowledged.push(gid);
        if (late) startedAfter.push(gid);
        if (n % 2 === 0) {
          const done = await http(source.url, 'PUT', `/api/v1/tasks/${gid}`, {
            body: { status: 'completed' },
            headers: source.auth,
          });
          expect(done.status).toBe(200);
        }
      }
    };
    // A saved view goes with the rest of Postgres.
    const view = await http(source.url, 'POST', '/api/v1/views', {
      body: { name: 'by project', query: { metrics: ['tasks_created'], dimensions: ['project'] } },
      headers: source.auth,
    });
    expect(view.status).toBe(201);
    const writers = Promise.all([writer(), writer(), writer()]);
    await waitFor(async () => acknowledged.length >= 30, { timeoutMs: 60_000 });
    const beforeBackup = [...acknowledged];

    // Through the running server: this process holds the data directory.
    const backup = await cli(source.config.dataDir, 'backup', '--to', backupDir);
    backupDone = true;
    await waitFor(async () => startedAfter.length >= 10, { timeoutMs: 60_000 });
    stop = true;
    await writers;

    expect(backup.stdout).toMatch(/^Backed up \d+ tasks, \d+ outbox facts, \d+ ClickHouse facts/);
    expect(backup.stderr).toContain('backup [');
    const manifest = JSON.parse(
      await fs.readFile(path.join(backupDir, MANIFEST_FILE), 'utf8'),
    ) as BackupManifest;
    expect(manifest).toMatchObject({ format: 'cairn-embedded-backup', format_version: 1 });
    expect(manifest.keys.map((key) => key.file)).toEqual(['master.key']);
    const factsInBackup = manifest.clickhouse.find((table) => table.table === 'facts')?.rows ?? 0;
    // Writes went on while the projector was held: the outbox is ahead of ClickHouse.
    expect(manifest.postgres.outbox).toBeGreaterThan(factsInBackup);
    // The source moves on: nothing from the backup may run there any more.
    expect(
      await source.db.selectFrom('projector_checkpoints').select('name').execute(),
    ).not.toContainEqual({ name: 'facts_swap_hold' });

    // Restore refuses a data directory that holds anything.
    const occupied = path.join(scratch, 'occupied');
    await fs.mkdir(occupied);
    await fs.writeFile(path.join(occupied, 'keep.txt'), 'mine');
    const refused = await failureOf(cli(occupied, 'restore', '--from', backupDir));
    expect(refused?.stderr).toContain(`The data directory ${occupied} is not empty (keep.txt)`);
    expect(await fs.readdir(occupied)).toEqual(['keep.txt']);

    const restoredDir = path.join(scratch, 'restored');
    const restored = await cli(restoredDir, 'restore', '--from', backupDir);
    expect(restored.stdout).toMatch(/^Restored \d+ tasks, /);
    expect(restored.stderr).toContain('restore [');

    // chDB opens one data directory per process: the source makes way.
    await source.close();
    const target = await startTestCairn({
      config: loadConfig({
        DATA_DIR: restoredDir,
        PORT: '0',
        LOG_LEVEL: 'silent',
        CAIRN_PROJECTOR_POLL_MS: '100',
      }),
      issueToken: false,
      rateLimits: unlimited(),
    });
    cleanup.push(() => target.close());

    // Postgres as at the backup's instant: every task created before it began, none asked for after.
    const gids = new Set(
      (await target.db.selectFrom('tasks').select('gid').execute()).map((row) => row.gid),
    );
    expect(gids.size).toBe(manifest.postgres.tasks);
    expect(beforeBackup.filter((gid) => !gids.has(gid))).toEqual([]);
    expect(startedAfter.filter((gid) => gids.has(gid))).toEqual([]);

    // The projector carries the outbox past the checkpoint, each fact once.
    const totals = await waitFor(
      async () => {
        const now = await projectionTotals(target.db, target.engines.clickhouse.client);
        return now.rows >= now.outbox ? now : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(totals.outbox).toBe(manifest.postgres.outbox);
    expect({ rows: totals.rows, distinct: totals.distinct }).toEqual({
      rows: totals.outbox,
      distinct: totals.outbox,
    });
    expect(totals.clickhouse).toEqual(totals.postgres);
    await expectRollupsMatchFacts(target.engines.clickhouse.client);

    // The source's token and master key still open the restored installation.
    expect(await answers(target, source.auth)).toEqual(await expectedAnswers(target));
    const self = await http(target.url, 'GET', '/api/v1/tokens/self', { headers: source.auth });
    expect(self.status).toBe(200);
    const restoredView = await http(target.url, 'GET', `/api/v1/views/${view.body.data.id}`, {
      headers: source.auth,
    });
    expect(restoredView.body.data).toEqual(view.body.data);
    expect(
      (await http(target.url, 'GET', '/api/v1/tokens', { headers: source.master })).status,
    ).toBe(200);

    // With no server holding it, the CLI copies the data directory itself.
    await target.close();
    const again = path.join(scratch, 'again');
    const direct = await cli(restoredDir, 'backup', '--to', again);
    expect(direct.stdout).toContain(
      `Backed up ${gids.size} tasks, ${totals.outbox} outbox facts, ${totals.outbox} ClickHouse facts`,
    );

    // A damaged copy is refused before anything is restored.
    const postgresFile = path.join(again, 'postgres.tar.gz');
    await fs.appendFile(postgresFile, 'x');
    const damagedInto = path.join(scratch, 'damaged');
    const damaged = await failureOf(cli(damagedInto, 'restore', '--from', again));
    expect(damaged?.stderr).toContain(
      `The backup in ${again} is damaged: postgres.tar.gz does not match its manifest`,
    );
    await expect(fs.readdir(damagedInto)).rejects.toMatchObject({ code: 'ENOENT' });
  }, 480_000);
});
