import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { projectAll } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts } from '../support/projection-invariants.ts';

const CHILD = path.resolve('test/support/project-then-die.ts');

function runChild(args: string[]): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === null && code !== 0) reject(new Error(`child failed (${code}): ${stderr}`));
      else resolve(signal);
    });
  });
}

describe('projector killed mid-batch', () => {
  const scratch = useMigratedPostgres();

  it('restarts after SIGKILL between insert and checkpoint and ends with every fact once', async () => {
    const occurred = new Date('2026-11-22T08:00:00Z');
    for (let i = 0; i < 50; i++) {
      await appendFacts(scratch.pg.db, [
        {
          kind: 'task_created',
          business: 'crash',
          task_gid: `t${i}`,
          occurred_at: occurred,
          payload: {
            name: `t${i}`,
            project: null,
            assignee: null,
            status: 'open',
            previous_status: null,
            due_on: null,
            task_created_at: occurred.toISOString(),
          },
        },
      ]);
    }
    const chDir = `${await tempDir()}/ch`;
    expect(await runChild([scratch.url, chDir, '20'])).toBe('SIGKILL');
    expect(await runChild([scratch.url, chDir, '20'])).toBe('SIGKILL');

    const ch = await openClickHouse({ dataDir: chDir });
    try {
      await migrateClickHouse(ch.client);
      const before = await ch.client.query({
        query: 'SELECT count() AS n FROM facts',
        format: 'JSONEachRow',
      });
      // The killed child's insert reached ClickHouse: the retry below must not double it.
      expect((await before.json<{ n: number }>())[0]?.n).toBe(20);
      // Drained until every fact is in: another file's open transaction on this shared server
      // can hold facts back a while (the late-commit rule is cluster-wide).
      await projectAll({ postgres: scratch.pg, clickhouse: ch }, 20);
      const after = await ch.client.query({
        query: 'SELECT count() AS n, uniqExact(fact_id) AS u FROM facts',
        format: 'JSONEachRow',
      });
      expect((await after.json())[0]).toEqual({ n: 50, u: 50 });
      await expectRollupsMatchFacts(ch.client);
    } finally {
      await ch.close();
    }
  });
});
