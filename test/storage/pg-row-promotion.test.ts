import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/engines.ts';

/**
 * Runs test/support/row-churn.ts under `--trace-gc-nvp` and gives the share of what its last
 * ten young-generation collections found allocated that they promoted: by then start-up is
 * long past, and anything promoted is a row kept alive past its page.
 */
function promotedShare(url: string, via: 'cairn' | 'callback' | 'pg'): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--trace-gc-nvp', '--import', 'tsx', path.resolve('test/support/row-churn.ts')],
    {
      env: { ...process.env, DATABASE_URL: url, QUERIES: '10000', VIA: via },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`row-churn exited with ${code}`));
      const scavenges = out
        .split('\n')
        .filter((line) => /\bgc=s\b/.test(line))
        .map((line) => ({
          allocated: Number(/\ballocated=(\d+)/.exec(line)?.[1]),
          promoted: Number(/\bpromoted=(\d+)/.exec(line)?.[1]),
        }))
        .slice(-10);
      if (scavenges.length < 10) return reject(new Error(`only ${scavenges.length} scavenges`));
      const sum = (key: 'allocated' | 'promoted') =>
        scavenges.reduce((total, scavenge) => total + scavenge[key], 0);
      resolve(sum('promoted') / sum('allocated'));
    });
  });
}

describe('rows read from Postgres, as V8 collects them', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("die young through Cairn's adapter, where pg's own promise keeps a large share alive", async () => {
    // Measured on Node 20, 22 and 24: pg's promise 25–36 %, the adapter 0.
    expect(await promotedShare(database.url, 'pg')).toBeGreaterThan(0.05);
    expect(await promotedShare(database.url, 'cairn')).toBeLessThan(0.02);
  }, 240_000);

  it('die young through the row-callback layer alone, over a plain pg client', async () => {
    expect(await promotedShare(database.url, 'callback')).toBeLessThan(0.02);
  }, 240_000);
});
