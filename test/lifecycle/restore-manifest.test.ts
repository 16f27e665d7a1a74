import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../libs/config/config.ts';
import { type BackupManifest, MANIFEST_FILE } from '../../libs/lifecycle/backup-manifest.ts';
import { startTestCairn, unlimited } from '../support/cairn.ts';
import { openToOthers, runCli, spawnCli } from '../support/cli-process.ts';
import { tempDir, testConfig, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

const EMBEDDED = { DATABASE_URL: '', REDIS_URL: '', CAIRN_MASTER_KEY: '' };

/** Each entry under `root` with its size, modification time and mode: what "unchanged" means. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const full = path.join(entry.parentPath, entry.name);
    const stat = await fs.lstat(full);
    out[path.relative(root, full)] =
      `${stat.size} ${stat.mtimeMs} ${(stat.mode & 0o7777).toString(8)}`;
  }
  return out;
}

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');

const failureOf = async (running: Promise<unknown>) =>
  running.then(
    () => undefined,
    (error: { stderr: string }) => error,
  );

describe('restore trusts nothing in the manifest, and replaces DATA_DIR only at the end', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  let scratch: string;
  let backup: string;
  /** An installation no server holds: what a restore with --replace would replace. */
  let installation: string;
  let tasks: number;

  beforeAll(async () => {
    const setup = await testConfig(EMBEDDED, { servers: false });
    cleanup.push(() => setup.cleanup());
    installation = setup.config.dataDir;
    const source = await startTestCairn({ config: setup.config, rateLimits: unlimited() });
    for (let i = 0; i < 20; i++) {
      const created = await http(source.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: `task ${i}` },
        headers: source.auth,
      });
      expect(created.status).toBe(201);
    }
    scratch = await tempDir('cairn-restore-manifest-');
    cleanup.push(() => fs.rm(scratch, { recursive: true, force: true }));
    backup = path.join(scratch, 'backup');
    await runCli(installation, ['backup', '--to', backup]);
    tasks = (await source.db.selectFrom('tasks').select('gid').execute()).length;
    await source.close();
  }, 360_000);
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  }, 120_000);

  /** A copy of the backup whose manifest `change` rewrote. */
  const tampered = async (name: string, change: (manifest: BackupManifest) => void) => {
    const dir = path.join(scratch, name);
    await fs.cp(backup, dir, { recursive: true });
    const file = path.join(dir, MANIFEST_FILE);
    const manifest = JSON.parse(await fs.readFile(file, 'utf8')) as BackupManifest;
    change(manifest);
    await fs.writeFile(file, JSON.stringify(manifest));
    return dir;
  };

  it('refuses a manifest naming a file outside the backup, copying nothing anywhere', async () => {
    const secret = path.join(scratch, 'secret.txt');
    await fs.writeFile(secret, 'not for DATA_DIR\n');
    const outward = await tampered('outward', (manifest) => {
      manifest.keys.push({ file: '../secret.txt', bytes: 17, sha256: '' });
    });
    // A hash that matches, as an attacker who wrote the manifest would give.
    const manifestFile = path.join(outward, MANIFEST_FILE);
    const manifest = JSON.parse(await fs.readFile(manifestFile, 'utf8')) as BackupManifest;
    (manifest.keys.at(-1) as { sha256: string }).sha256 = await sha256(secret);
    await fs.writeFile(manifestFile, JSON.stringify(manifest));
    const target = path.join(scratch, 'outward-target', 'data');
    const refused = await failureOf(runCli(target, ['restore', '--from', outward]));
    expect(refused?.stderr).toContain(
      `names keys[1].file "../secret.txt", which is not a plain file name (no folders, no "..", no absolute paths): refused`,
    );
    await expect(fs.stat(path.join(scratch, 'outward-target', 'secret.txt'))).rejects.toThrow();
    await expect(fs.stat(target)).rejects.toThrow();

    const absolute = await tampered('absolute', (manifest) => {
      (manifest.clickhouse[0] as { file: string }).file = path.join(
        backup,
        manifest.clickhouse[0]?.file ?? '',
      );
    });
    const refusedAbsolute = await failureOf(runCli(target, ['restore', '--from', absolute]));
    expect(refusedAbsolute?.stderr).toMatch(
      /names clickhouse\[0\]\.file "\/.*", which is not a plain file name/,
    );

    // A plain name that is no key file would land in DATA_DIR beside the data.
    const notAKey = await tampered('not-a-key', (manifest) => {
      manifest.keys.push({
        ...(manifest.keys[0] as BackupManifest['keys'][number]),
        file: 'server.json',
      });
    });
    const refusedKey = await failureOf(runCli(target, ['restore', '--from', notAKey]));
    expect(refusedKey?.stderr).toContain(
      'names keys[1].file "server.json", which is not a key file',
    );
    await expect(fs.stat(target)).rejects.toThrow();
  }, 240_000);

  it('refuses a manifest that leaves out a table the backup holds, leaving the installation as it was', async () => {
    const noFacts = await tampered('no-facts', (manifest) => {
      manifest.clickhouse = manifest.clickhouse.filter((saved) => saved.table !== 'facts');
    });
    const before = await snapshot(installation);
    const refused = await failureOf(
      runCli(installation, ['restore', '--from', noFacts, '--replace']),
    );
    expect(refused?.stderr).toContain('lists no ClickHouse table facts, which every backup holds');

    // A complete rollup (rollup_builds says so) left out: refused once ClickHouse is staged.
    const noRollup = await tampered('no-rollup', (manifest) => {
      manifest.clickhouse = manifest.clickhouse.filter(
        (saved) => saved.table !== 'rollup_labels_day',
      );
    });
    const refusedRollup = await failureOf(
      runCli(installation, ['restore', '--from', noRollup, '--replace']),
    );
    expect(refusedRollup?.stderr).toContain('lists no ClickHouse table rollup_labels_day');
    expect(await snapshot(installation)).toEqual(before);
    // Nothing beside it either: no staging folder, nothing moved aside.
    const siblings = await fs.readdir(path.dirname(installation));
    expect(siblings.filter((name) => name.includes(path.basename(installation)))).toEqual([
      path.basename(installation),
    ]);
  }, 300_000);

  it('a restore killed while staging leaves the installation as it was, and the next restore and start work', async () => {
    const before = await snapshot(installation);
    const staging = path.join(
      path.dirname(installation),
      `.${path.basename(installation)}.restoring`,
    );
    const killed = spawnCli(installation, ['restore', '--from', backup, '--replace']);
    // Once PGlite's files are being written into the staging folder.
    await waitFor(
      () =>
        fs.stat(path.join(staging, 'pg', 'PG_VERSION')).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 120_000, intervalMs: 10 },
    );
    process.kill(killed.pid, 'SIGKILL');
    expect((await killed.done).signal).toBe('SIGKILL');
    expect(await snapshot(installation)).toEqual(before);

    const restored = await runCli(installation, ['restore', '--from', backup, '--replace']);
    expect(restored.stdout).toContain(`Restored ${tasks} tasks`);
    const aside = /The installation it replaced is in (\S+);/.exec(restored.stdout)?.[1] ?? '';
    expect(aside).toMatch(new RegExp(`^${installation}\\.replaced-`));
    cleanup.push(() => fs.rm(aside, { recursive: true, force: true }));
    expect(await snapshot(aside)).toEqual(before);
    await expect(fs.stat(staging)).rejects.toThrow();
    // Restored by a process started under umask 022.
    expect(await openToOthers(installation)).toEqual([]);

    const started = await startTestCairn({
      config: loadConfig({ DATA_DIR: installation, PORT: '0', LOG_LEVEL: 'silent' }),
      issueToken: false,
    });
    cleanup.push(() => started.close());
    expect((await started.db.selectFrom('tasks').select('gid').execute()).length).toBe(tasks);
    await started.close();
  }, 480_000);
});
