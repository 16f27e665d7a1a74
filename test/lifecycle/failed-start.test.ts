import fs from 'node:fs/promises';
import net from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startCairn } from '../../apps/server/cairn.ts';
import { type TestConfig, testConfig, waitFor } from '../support/engines.ts';

/** Backends other than this one connected to the database at `url`. */
async function otherBackends(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid()`,
    );
    return rows[0].n;
  } finally {
    await client.end();
  }
}

describe('a start that fails once the engines are open', () => {
  const blocker = net.createServer();
  let setup: TestConfig | undefined;
  afterAll(async () => {
    await setup?.cleanup();
    await new Promise((resolve) => blocker.close(resolve));
  });

  it('stops what it had started (engines included) and rejects with the cause', async () => {
    // The HTTP port is the last thing to open, so everything before it has started.
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    setup = await testConfig({ HOST: '127.0.0.1', PORT: String(port) });
    const { config } = setup;

    await expect(startCairn({ config })).rejects.toMatchObject({ code: 'EADDRINUSE' });

    if (config.databaseUrl) {
      const url = config.databaseUrl;
      await waitFor(async () => (await otherBackends(url)) === 0, { timeoutMs: 30_000 });
    } else {
      // Closing embedded Postgres gives its data directory's lock up.
      const lock = `${config.dataPaths.postgres}.lock`;
      await expect(fs.access(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    }
  }, 120_000);
});
