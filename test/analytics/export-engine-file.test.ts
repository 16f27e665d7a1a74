import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countLines, EngineFile, fileLines } from '../../libs/analytics/export-engine-file.ts';
import { type ClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { tempDir } from '../support/engines.ts';

describe('a file the embedded engine writes an export into', () => {
  let ch: ClickHouse;
  let root: string;
  beforeAll(async () => {
    root = await tempDir();
    ch = await openClickHouse({ dataDir: path.join(root, 'ch') });
  });
  afterAll(async () => {
    await ch.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  /** A spool folder whose name a literal must quote: a quote and a backslash. */
  const spoolDir = () => path.join(root, "it's a \\ spool");

  async function write(file: EngineFile, sql: string, params = {}): Promise<void> {
    await ch.client.command({
      query: `${sql}\n${file.clause('TabSeparatedWithNames')}`,
      query_params: params,
    });
  }

  it('is the owner’s alone, gone by name once open, and read line by line', async () => {
    const file = await EngineFile.create(spoolDir());
    expect((await fs.stat(spoolDir())).mode & 0o777).toBe(0o700);
    await write(
      file,
      'SELECT number AS n, concat({prefix:String}, toString(number)) AS label FROM numbers(100000)',
      { prefix: 'a\tb\nc' },
    );
    expect((await fs.stat(file.path)).mode & 0o777).toBe(0o600);
    const handle = await file.open();
    try {
      expect(await fs.readdir(spoolDir())).toEqual([]);
      expect(await countLines(handle)).toBe(100_001);
      let lines = 0;
      let first: string | undefined;
      let last: string | undefined;
      for await (const batch of fileLines(handle)) {
        first ??= batch[0]?.text;
        lines += batch.length;
        last = batch.at(-1)?.text;
      }
      expect(lines).toBe(100_001);
      expect(first).toBe('n\tlabel');
      // The engine escapes a tab or line feed inside a field, so a line is a row.
      expect(last).toBe('99999\ta\\tb\\nc99999');
    } finally {
      await handle.close();
    }
  });

  it('an empty answer still names its columns', async () => {
    const file = await EngineFile.create(spoolDir());
    await write(file, 'SELECT number AS n FROM numbers(0)');
    const handle = await file.open();
    try {
      expect(await countLines(handle)).toBe(1);
      const batches = [];
      for await (const batch of fileLines(handle)) batches.push(batch);
      expect(batches).toEqual([[{ text: 'n' }]]);
    } finally {
      await handle.close();
    }
  });

  it('a statement that fails leaves nothing once discarded', async () => {
    const file = await EngineFile.create(spoolDir());
    await expect(
      write(file, 'SELECT throwIf(number = 50000, {why:String}) FROM numbers(100000)', {
        why: 'stop here',
      }),
    ).rejects.toThrow(/stop here/);
    await file.discard();
    expect(await fs.readdir(spoolDir())).toEqual([]);
    await expect(file.open()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
