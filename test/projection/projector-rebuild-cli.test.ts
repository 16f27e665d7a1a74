import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openClickHouse } from '../../libs/storage/clickhouse.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import {
  expectRollupsMatchFacts,
  factFor,
  projectionTotals,
} from '../support/projection-invariants.ts';

const run = promisify(execFile);

describe('npm run cli -- projector rebuild', () => {
  const scratch = useMigratedPostgres();

  it('projects the whole outbox with a progress bar and reports what it did', async () => {
    for (let i = 0; i < 25; i++) await appendFacts(scratch.pg.db, [factFor(`c${i % 2}`, `t${i}`)]);
    const dataDir = await tempDir();
    const { stdout, stderr } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        path.resolve('apps/cli/main.ts'),
        'projector',
        'rebuild',
        '--batch-size',
        '10',
      ],
      {
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: scratch.url, LOG_LEVEL: 'silent' },
      },
    );
    expect(stdout).toMatch(/Rebuilt facts: 25 facts re-projected in [\d.]+ s and swapped in\./);
    expect(stderr).toContain('rebuild [');
    expect(stderr).toContain('25/25 facts');
    expect(stderr).toContain('rollups [');

    // The CLI has exited, so this process may open its chDB directory.
    const ch = await openClickHouse({ dataDir: `${dataDir}/ch` });
    try {
      const totals = await projectionTotals(scratch.pg.db, ch.client);
      expect({ rows: totals.rows, distinct: totals.distinct }).toEqual({ rows: 25, distinct: 25 });
      expect(totals.clickhouse).toEqual(totals.postgres);
      await expectRollupsMatchFacts(ch.client);
    } finally {
      await ch.close();
    }
  });
});
