import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../libs/observability/logger.ts';
import {
  createOwnerOnlyWriteStream,
  ownerOnlyDir,
  replaceOwnerOnlyFile,
  writeOwnerOnlyFile,
} from '../../libs/storage/owner-only.ts';
import { startTestCairn, unlimited } from '../support/cairn.ts';
import { fileCount, openToOthers, runCli } from '../support/cli-process.ts';
import { tempDir, testConfig, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { projectionTotals } from '../support/projection-invariants.ts';

const EMBEDDED = { DATABASE_URL: '', REDIS_URL: '', CAIRN_MASTER_KEY: '' };

/** Opens a tree to everyone as an older Cairn left it: folders 0755, PGlite's files 0666, others 0644. */
async function asOlderVersionsLeftIt(root: string): Promise<void> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  await fs.chmod(root, 0o755);
  for (const entry of entries) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) await fs.chmod(full, 0o755);
    else if (entry.isFile()) {
      await fs.chmod(full, full.includes(`${path.sep}pg${path.sep}`) ? 0o666 : 0o644);
    }
  }
}

describe('everything under DATA_DIR and every backup is the owner’s alone, whatever the umask', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  }, 120_000);

  it('a server started under umask 022 tightens an open DATA_DIR, and keeps later writes, sockets, spools and backups owner-only', async () => {
    const setup = await testConfig(EMBEDDED, { servers: false });
    cleanup.push(() => setup.cleanup());
    const { dataDir } = setup.config;
    const first = await startTestCairn({ config: setup.config, issueToken: false });
    await first.close();
    await asOlderVersionsLeftIt(dataDir);
    expect((await openToOthers(dataDir)).length).toBeGreaterThan(900);

    // The server starts as a process given the usual umask would.
    process.umask(0o022);
    const lines: string[] = [];
    const cairn = await startTestCairn({
      config: setup.config,
      logger: createLogger('warn', { write: (line: string) => lines.push(line) }),
      rateLimits: unlimited(),
    });
    cleanup.push(() => cairn.close());
    const warnings = lines
      .map((line) => JSON.parse(line))
      .filter((line) => line.level === 40 && line.mode_found);
    expect(warnings).toContainEqual(
      expect.objectContaining({
        path: dataDir,
        mode_found: '0755',
        mode_set: '0700',
        entries: 1,
        msg: expect.stringContaining(
          `DATA_DIR: ${dataDir} was open to other users (mode 0755); now 0700`,
        ),
      }),
    );
    expect(warnings).toContainEqual(
      expect.objectContaining({
        mode_found: '0666',
        mode_set: '0600',
        entries: expect.any(Number),
      }),
    );
    expect(await openToOthers(dataDir)).toEqual([]);

    // Later writes: table pages, a new relation, WAL segments, ClickHouse parts and a merge.
    for (let i = 0; i < 60; i++) {
      const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: `task ${i}`, project: `p${i % 3}` },
        headers: cairn.auth,
      });
      expect(created.status).toBe(201);
    }
    await waitFor(
      async () => {
        const totals = await projectionTotals(cairn.db, cairn.engines.clickhouse.client);
        return totals.rows >= totals.outbox;
      },
      { timeoutMs: 60_000 },
    );
    await sql`create table owner_probe as select generate_series(1, 50000) as n`.execute(cairn.db);
    await sql`select pg_switch_wal()`.execute(cairn.db);
    await sql`checkpoint`.execute(cairn.db);
    const relation = await sql<{ file: string }>`
      select pg_relation_filepath('owner_probe') as file`.execute(cairn.db);
    const relationFile = path.join(setup.config.dataPaths.postgres, relation.rows[0]?.file ?? '');
    expect((await fs.stat(relationFile)).mode & 0o777).toBe(0o600);
    const ch = cairn.engines.clickhouse.client;
    await ch.command({ query: 'OPTIMIZE TABLE facts FINAL' });
    const parts = await (
      await ch.query({
        query: "SELECT path FROM system.parts WHERE table = 'facts' AND active",
        format: 'JSONEachRow',
      })
    ).json<{ path: string }>();
    expect(parts.length).toBeGreaterThan(0);
    for (const part of parts) {
      expect((await fs.stat(part.path)).mode & 0o777, part.path).toBe(0o700);
      expect(await openToOthers(part.path), part.path).toEqual([]);
    }

    // A spool beside the data, through the helpers other code uses.
    process.umask(0o022);
    const spool = await ownerOnlyDir(path.join(dataDir, 'spool'));
    await writeOwnerOnlyFile(path.join(spool, 'index.json'), '{}');
    await replaceOwnerOnlyFile(path.join(spool, 'index.json'), '{"n":1}');
    const stream = createOwnerOnlyWriteStream(path.join(spool, 'export.csv'));
    await new Promise<void>((resolve, reject) =>
      stream.end('a,b\r\n', () => resolve()).on('error', reject),
    );
    const existing = path.join(dataDir, 'made-by-hand');
    await fs.mkdir(existing, { mode: 0o755 });
    await ownerOnlyDir(existing);

    // The control socket and everything else, the server still running.
    await expect(fs.stat(path.join(dataDir, 'control.sock'))).resolves.toBeTruthy();
    expect(await openToOthers(dataDir)).toEqual([]);
    expect(await fileCount(dataDir)).toBeGreaterThan(1_000);

    // A backup through the running server, asked by a CLI under umask 022.
    const scratch = await tempDir('cairn-owner-only-');
    cleanup.push(() => fs.rm(scratch, { recursive: true, force: true }));
    const throughServer = path.join(scratch, 'through-server');
    await runCli(dataDir, ['backup', '--to', throughServer]);
    expect(await fileCount(throughServer)).toBeGreaterThan(3);
    expect(await openToOthers(throughServer)).toEqual([]);

    // And one the CLI takes itself, into an empty folder made open to others.
    await cairn.close();
    const direct = path.join(scratch, 'direct');
    await fs.mkdir(direct, { mode: 0o755 });
    await fs.chmod(direct, 0o755);
    await runCli(dataDir, ['backup', '--to', direct]);
    expect(await fileCount(direct)).toBeGreaterThan(3);
    expect(await openToOthers(direct)).toEqual([]);
    expect(await openToOthers(dataDir)).toEqual([]);
  }, 300_000);
});
