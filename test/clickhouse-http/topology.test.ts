import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../../dev-tools/cluster/cluster.ts';
import { type PrivateServer, privateRedis } from '../../dev-tools/private-servers.ts';
import { countUnprojected, loadCheckpoint } from '../../libs/projection/outbox-reader.ts';
import { FACTS_CHECKPOINT } from '../../libs/projection/projector.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { expectRollupsMatchFacts, projectionTotals } from '../support/projection-invariants.ts';
import { parseMetrics, sampleValue } from '../support/prometheus.ts';

/** Short leases, so a killed leader is replaced within a test's patience. */
const LEASE_MS = 4_000;
const BUSINESS = 'topo';

type Headers = Record<string, string>;

describe('the deployment shape: two api and two projector processes on the ClickHouse stand-in', () => {
  let redis: PrivateServer;
  let cluster: Cluster;
  let pg: Postgres;
  let ch: ClickHouseClient;
  let auth: Headers;
  let master: Headers;

  beforeAll(async () => {
    // A Redis of its own: one case restarts it.
    redis = await privateRedis();
    await redis.start();
    cluster = await startCluster({
      api: 2,
      projectors: 2,
      redisUrl: redis.url,
      env: { CAIRN_PROJECTOR_LEASE_MS: String(LEASE_MS), CAIRN_PROJECTOR_POLL_MS: '200' },
    });
    pg = await openPostgres({ url: cluster.database.url });
    ch = createClient({ url: cluster.clickhouse.url });
    master = { Authorization: `Bearer ${cluster.masterKey}` };
    auth = await issue([BUSINESS, 'erased-co']);
  }, 600_000);

  afterAll(async () => {
    await ch?.close();
    await pg?.close();
    await cluster?.stop();
    await redis?.stop();
  }, 300_000);

  const api = (i: number) => cluster.api[i]?.url as string;
  async function issue(businesses: string[], scopes?: string[]): Promise<Headers> {
    const res = await http(api(0), 'POST', '/api/v1/tokens', {
      headers: master,
      body: {
        name: `topology ${businesses.join(',')}`,
        scopes: scopes ?? ['analytics:read', 'workflows:read', 'workflows:write'],
        businesses,
        kind: 'service_account',
      },
    });
    expect(res.status).toBe(201);
    return { Authorization: `Bearer ${res.body.data.token}`, 'X-Token-Id': res.body.data.id };
  }
  const bearer = (headers: Headers) => ({ Authorization: headers.Authorization as string });
  async function leaderFlags(): Promise<number[]> {
    return Promise.all(
      cluster.projectors.map(async (projector) => {
        try {
          const res = await fetch(`${projector.url}/metrics`);
          return sampleValue(parseMetrics(await res.text()), 'cairn_projector_leader');
        } catch {
          return Number.NaN;
        }
      }),
    );
  }
  /**
   * Waits until every fact in the outbox is in ClickHouse and the projector's cursor is past
   * them (its commit follows the insert: until then the watermark has yet to move).
   */
  async function untilProjected(timeoutMs = 120_000): Promise<void> {
    await waitFor(
      async () => {
        const checkpoint = await loadCheckpoint(pg.db, FACTS_CHECKPOINT);
        if (checkpoint.pending !== null) return undefined;
        if ((await countUnprojected(pg.db, checkpoint.cursor)) > 0) return undefined;
        const totals = await projectionTotals(pg.db, ch);
        return (totals.outbox > 0 && totals.rows === totals.outbox) || undefined;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }
  async function createTask(base: string, name: string, extra: Headers = {}) {
    return http(base, 'POST', '/api/v1/tasks', {
      headers: { ...bearer(auth), ...extra },
      body: { business: BUSINESS, name, project: 'p1', status: 'open' },
    });
  }

  it('has one projector projecting; each says which on /metrics', async () => {
    const flags = await waitFor(
      async () => {
        const now = await leaderFlags();
        return now.filter((flag) => flag === 1).length === 1 ? now : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect([...flags].sort()).toEqual([0, 1]);
  });

  it('reads through one replica what was written through the other, in tasks and analytics', async () => {
    const created = await createTask(api(0), 'written on 0');
    expect(created.status).toBe(201);
    const gid = created.body.data.gid;
    const read = await http(api(1), 'GET', `/api/v1/tasks/${gid}`, { headers: bearer(auth) });
    expect(read.status).toBe(200);
    expect(read.body.data.name).toBe('written on 0');
    await untilProjected();
    const query = { metrics: ['tasks_created'], business: BUSINESS, period: 'today' };
    const counted = await http(api(1), 'POST', '/api/v1/query', {
      headers: { ...bearer(auth), 'Cache-Control': 'no-cache' },
      body: query,
    });
    expect(counted.status).toBe(200);
    expect(counted.body.data[0].tasks_created).toBeGreaterThanOrEqual(1);
  });

  it('shares rate limits, idempotency records and cached answers across replicas', async () => {
    const first = await http(api(0), 'GET', '/api/v1/tokens/self', { headers: bearer(auth) });
    const second = await http(api(1), 'GET', '/api/v1/tokens/self', { headers: bearer(auth) });
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBeLessThan(
      Number(first.headers.get('x-ratelimit-remaining')),
    );
    const key = { 'Idempotency-Key': `topology-${Date.now()}` };
    const once = await createTask(api(0), 'idempotent', key);
    const again = await createTask(api(1), 'idempotent', key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.gid).toBe(once.body.data.gid);
    await untilProjected();
    const query = {
      metrics: ['tasks_created', 'open_tasks'],
      dimensions: ['project'],
      business: BUSINESS,
    };
    const miss = await http(api(0), 'POST', '/api/v1/query', {
      headers: bearer(auth),
      body: query,
    });
    expect(miss.status).toBe(200);
    const hit = await http(api(1), 'POST', '/api/v1/query', { headers: bearer(auth), body: query });
    expect(hit.body.metadata.cache).toBe('hit');
    expect(hit.body.data).toEqual(miss.body.data);
  });

  it('a revocation and an erasure made through one replica hold on the other', async () => {
    const token = await issue([BUSINESS]);
    expect(
      (await http(api(1), 'GET', '/api/v1/tokens/self', { headers: bearer(token) })).status,
    ).toBe(200);
    const revoked = await http(api(0), 'DELETE', `/api/v1/tokens/${token['X-Token-Id']}`, {
      headers: master,
    });
    expect(revoked.status).toBe(204);
    await waitFor(
      async () =>
        (await http(api(1), 'GET', '/api/v1/tokens/self', { headers: bearer(token) })).status ===
          401 || undefined,
      { timeoutMs: 2_000, intervalMs: 20 },
    );
    const doomed = await http(api(0), 'POST', '/api/v1/tasks', {
      headers: bearer(auth),
      body: { business: 'erased-co', name: 'to be erased' },
    });
    expect(doomed.status).toBe(201);
    const erase = await http(api(0), 'DELETE', '/api/v1/businesses/erased-co', { headers: master });
    expect(erase.status).toBe(202);
    await waitFor(
      async () => {
        const status = await http(api(1), 'GET', '/api/v1/businesses/erased-co/erasure', {
          headers: master,
        });
        return status.body?.data?.status === 'done' || undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    const gone = await http(api(1), 'GET', `/api/v1/tasks/${doomed.body.data.gid}`, {
      headers: bearer(auth),
    });
    expect(gone.status).toBe(404);
  });

  it('hands over within 15 s when the leader is killed mid-batch under writes; every fact once', async () => {
    const flags = await leaderFlags();
    const leader = cluster.projectors[flags.indexOf(1)];
    if (!leader) throw new Error(`no leader among ${JSON.stringify(flags)}`);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await createTask(api(i % 2), `stream ${i}`).catch(() => undefined);
        if (res?.status === 201) written++;
      }
    })();
    await waitFor(async () => written >= 50 || undefined, { timeoutMs: 60_000 });
    const killedAt = performance.now();
    leader.signal('SIGKILL');
    await leader.exited();
    const tookOver = await waitFor(
      async () => ((await leaderFlags()).includes(1) ? performance.now() : undefined),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(tookOver - killedAt).toBeLessThan(15_000);
    await waitFor(async () => written >= 150 || undefined, { timeoutMs: 120_000 });
    writing = false;
    await writer;
    await untilProjected();
    const totals = await projectionTotals(pg.db, ch);
    expect(totals.rows).toBe(totals.outbox);
    expect(totals.distinct).toBe(totals.outbox);
    expect(totals.clickhouse).toEqual(totals.postgres);
    await expectRollupsMatchFacts(ch);
    // The killed process comes back as a standby.
    await leader.restart();
    expect((await leaderFlags()).filter((flag) => flag === 1)).toHaveLength(1);
  }, 300_000);

  it('an api replica killed mid-request: retried on the other, nothing is half-written', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `killed-${Date.now()}-${i}`);
    const victim = cluster.api[0];
    if (!victim) throw new Error('no api replica');
    const sent = keys.map(async (key, i) => {
      if (i === 10) victim.signal('SIGKILL');
      const attempt = (base: string) =>
        createTask(base, key, { 'Idempotency-Key': key }).catch(() => undefined);
      const first = await attempt(api(0));
      return first?.status === 201 ? first : attempt(api(1));
    });
    const answers = await Promise.all(sent);
    for (const answer of answers) expect(answer?.status).toBe(201);
    const rows = await pg.db
      .selectFrom('tasks')
      .select(({ fn }) => ['name', fn.countAll<string>().as('n')])
      .where('name', 'in', keys)
      .groupBy('name')
      .execute();
    expect(rows).toHaveLength(keys.length);
    for (const row of rows) expect(Number(row.n)).toBe(1);
    await victim.restart();
  }, 300_000);

  it('keeps writing and projecting through a Redis restart', async () => {
    await redis.kill();
    const during = await createTask(api(1), 'while redis is away');
    expect(during.status).toBe(201);
    await redis.start();
    const after = await createTask(api(0), 'after redis is back');
    expect(after.status).toBe(201);
    await untilProjected();
    const limited = await http(api(0), 'GET', '/api/v1/tokens/self', { headers: bearer(auth) });
    expect(limited.headers.get('x-ratelimit-limit')).not.toBeNull();
  }, 300_000);

  it('answers 503 with Retry-After while ClickHouse restarts, then catches up with nothing lost', async () => {
    const query = { metrics: ['tasks_created'], business: BUSINESS, period: 'today' };
    const restart = cluster.clickhouse.restart({ kill: true, downMs: 5_000 });
    const down = await waitFor(
      async () => {
        const res = await http(api(0), 'POST', '/api/v1/query', {
          headers: { ...bearer(auth), 'Cache-Control': 'no-cache' },
          body: query,
        });
        return res.status === 503 ? res : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(down.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    const whileDown = await createTask(api(1), 'while clickhouse is away');
    expect(whileDown.status).toBe(201);
    await restart;
    await waitFor(
      async () => {
        const res = await http(api(1), 'POST', '/api/v1/query', {
          headers: { ...bearer(auth), 'Cache-Control': 'no-cache' },
          body: query,
        });
        return res.status === 200 || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await untilProjected();
    const totals = await projectionTotals(pg.db, ch);
    expect(totals.distinct).toBe(totals.outbox);
  }, 300_000);
});
