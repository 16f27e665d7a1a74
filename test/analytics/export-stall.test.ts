import fs from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRest, stalledDownload } from '../../dev-tools/stalled-download.ts';
import { loadFacts } from '../support/analytics-load.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

const BUSINESSES = ['biz-0', 'biz-1', 'biz-2', 'biz-3'];
/**
 * Hundreds of thousands of rows, tens of MiB of CSV: far more than the kernel buffers of both
 * ends of a loopback connection hold (up to about 10 MiB together), so a reader that stops
 * reading stalls the download.
 */
const LARGE = {
  metrics: ['tasks_created', 'tasks_completed'],
  dimensions: ['day', 'assignee', 'project', 'status'],
  period: 'this_year',
};

const EXPORT = '/api/v1/query/export';

/**
 * What the server keeps of its exports on disk: files named in the spool folder, and files it
 * holds open there (unlinked ones too, which keep their disk until closed).
 */
async function spooled(dir: string): Promise<{ named: string[]; open: number }> {
  const named = await fs.readdir(dir).catch(() => []);
  let open = 0;
  for (const fd of await fs.readdir('/proc/self/fd')) {
    const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(`${dir}/`)) open++;
  }
  return { named, open };
}
const CSV = { Accept: 'text/csv' };

describe('a download nobody reads holds nothing shared', () => {
  const cairn = useCairn({
    businesses: BUSINESSES,
    env: {
      CAIRN_QUERY_TIMEOUT_MS: '60000',
      // Two queries at once in all: two stalled downloads would fill every slot.
      CAIRN_QUERY_CONCURRENCY: '2',
      // On chDB one statement may run half the wait bound: the large export's statement takes
      // seconds on a busy machine.
      CAIRN_QUERY_QUEUE_WAIT_MS: '60000',
      CAIRN_SEND_IDLE_TIMEOUT_MS: '600000',
    },
  });
  beforeAll(() => loadFacts(cairn.engines.clickhouse.client), 180_000);

  it('gives the engine back once it has answered, however slowly the file is read', async () => {
    const first = await cairn.token({ businesses: BUSINESSES, scopes: ['analytics:read'] });
    const second = await cairn.token({ businesses: BUSINESSES, scopes: ['analytics:read'] });
    const stalled = [
      await stalledDownload(cairn.url, EXPORT, { ...first, ...CSV }, LARGE),
      await stalledDownload(cairn.url, EXPORT, { ...second, ...CSV }, LARGE),
    ];
    try {
      for (const { head } of stalled) expect(head).toMatch(/^HTTP\/1\.1 200/);
      await waitFor(async () => cairn.queryAdmission.state.running === 0 || undefined, {
        timeoutMs: 120_000,
      });
      // Nothing of theirs is named on disk, only held open for its reader.
      const held = await spooled(cairn.config.spoolDir);
      expect(held.named).toEqual([]);
      expect(held.open).toBe(2);
      // Another caller's query is served while both downloads sit unread.
      const other = await cairn.token({ businesses: ['biz-1'], scopes: ['analytics:read'] });
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body: { metrics: ['tasks_created'], business: 'biz-1', period: 'this_year' },
        headers: other,
      });
      expect(res.status).toBe(200);
      // Both files are still whole when their readers come back.
      for (const one of stalled) {
        const body = (await readRest(one)).toString();
        expect(body.endsWith('0\r\n\r\n'), 'the chunked body ends with its last chunk').toBe(true);
        // More than both ends' buffers hold: the download really stalled while unread.
        expect(body.length).toBeGreaterThan(16 * 1024 * 1024);
      }
      // Read to the end, the files are gone.
      await waitFor(async () => (await spooled(cairn.config.spoolDir)).open === 0 || undefined, {
        timeoutMs: 60_000,
      });
      expect((await spooled(cairn.config.spoolDir)).named).toEqual([]);
    } finally {
      for (const { socket } of stalled) socket.destroy();
    }
  }, 300_000);

  it('leaves nothing on disk when its caller goes while the engine is still writing', async () => {
    const caller = await cairn.token({ businesses: BUSINESSES, scopes: ['analytics:read'] });
    const gone = new AbortController();
    const download = fetch(`${cairn.url}${EXPORT}`, {
      method: 'POST',
      headers: { ...caller, ...CSV, 'Content-Type': 'application/json' },
      body: JSON.stringify(LARGE),
      signal: gone.signal,
    }).catch((error: unknown) => error);
    await waitFor(async () => cairn.queryAdmission.state.running > 0 || undefined, {
      timeoutMs: 60_000,
      intervalMs: 5,
    });
    gone.abort();
    await download;
    await waitFor(async () => cairn.queryAdmission.state.running === 0 || undefined, {
      timeoutMs: 120_000,
    });
    await waitFor(
      async () => {
        const left = await spooled(cairn.config.spoolDir);
        return (left.named.length === 0 && left.open === 0) || undefined;
      },
      { timeoutMs: 60_000 },
    );
  }, 300_000);

  it('refuses a third download of one caller at once with 429, not another caller', async () => {
    const caller = await cairn.token({ businesses: BUSINESSES, scopes: ['analytics:read'] });
    const stalled = [
      await stalledDownload(cairn.url, EXPORT, { ...caller, ...CSV }, LARGE),
      await stalledDownload(cairn.url, EXPORT, { ...caller, ...CSV }, LARGE),
    ];
    try {
      const third = await http(cairn.url, 'POST', EXPORT, {
        body: { metrics: ['tasks_created'], dimensions: ['project'], business: 'biz-1' },
        headers: { ...caller, ...CSV },
      });
      expect(third.status).toBe(429);
      expect(third.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(third.body.detail).toMatch(/2 downloads/);
      const other = await cairn.token({ businesses: ['biz-1'], scopes: ['analytics:read'] });
      const fine = await http(cairn.url, 'POST', EXPORT, {
        body: { metrics: ['tasks_created'], dimensions: ['project'], business: 'biz-1' },
        headers: { ...other, ...CSV },
      });
      expect(fine.status).toBe(200);
    } finally {
      for (const { socket } of stalled) socket.destroy();
    }
    // Once a download ends, its place is free again.
    await waitFor(
      async () => {
        const again = await http(cairn.url, 'POST', EXPORT, {
          body: { metrics: ['tasks_created'], dimensions: ['project'], business: 'biz-1' },
          headers: { ...caller, ...CSV },
        });
        return again.status === 200 || undefined;
      },
      { timeoutMs: 60_000 },
    );
  }, 300_000);
});

describe('a response that makes no write progress', () => {
  const cairn = useCairn({
    businesses: BUSINESSES,
    env: { CAIRN_QUERY_TIMEOUT_MS: '60000', CAIRN_SEND_IDLE_TIMEOUT_MS: '1000' },
  });
  beforeAll(() => loadFacts(cairn.engines.clickhouse.client), 180_000);

  it('is cut after CAIRN_SEND_IDLE_TIMEOUT_MS, its file never finished', async () => {
    const stalled = await stalledDownload(cairn.url, EXPORT, { ...cairn.auth, ...CSV }, LARGE);
    try {
      expect(stalled.head).toMatch(/^HTTP\/1\.1 200/);
      // The server gives up on the reader: its side of the connection goes.
      await waitFor(
        async () => {
          const res = await http(cairn.url, 'GET', '/metrics');
          return /cairn_http_responses_cut_total(\{[^}]*\})? [1-9]/.test(res.text) || undefined;
        },
        { timeoutMs: 120_000 },
      );
      const body = (await readRest(stalled)).toString();
      expect(body.endsWith('0\r\n\r\n'), 'no last chunk: the client can tell').toBe(false);
      // The cut download's file goes with it.
      await waitFor(async () => (await spooled(cairn.config.spoolDir)).open === 0 || undefined, {
        timeoutMs: 60_000,
      });
      expect((await spooled(cairn.config.spoolDir)).named).toEqual([]);
    } finally {
      stalled.socket.destroy();
    }
  }, 300_000);
});
