import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_WALK } from '../../libs/tasks/dependency.service.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';
import { insertFan } from '../support/task-fan.ts';

/** `depth=all` and `status` on the dependents and dependencies listings. */
describe('transitive and status-filtered dependency listings', () => {
  const cairn = useCairn({ rateLimits: unlimited() });
  const gid: Record<string, string> = {};
  beforeAll(async () => {
    // A fan of MAX_WALK + 1 dependents under one task, written before any request.
    await insertFan(cairn.db, { prefix: 'fan', count: MAX_WALK + 1, waiting: 'on-hub' });
    for (const name of ['a', 'b', 'c', 'd', 'e', 'lone']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name, status: name === 'c' ? 'completed' : 'open' },
        headers: cairn.auth,
      });
      gid[name] = res.body.data.gid;
    }
    // b → a, c → a, c → b, d → c, e → d: a is held up by b and c directly, d at 2, e at 3.
    for (const [task, on] of [
      ['b', ['a']],
      ['c', ['a', 'b']],
      ['d', ['c']],
      ['e', ['d']],
    ] as const) {
      const res = await http(cairn.url, 'POST', `/api/v1/tasks/${gid[task]}/dependencies`, {
        body: { dependencies: on.map((name) => gid[name]) },
        headers: cairn.auth,
      });
      expect(res.status).toBe(200);
    }
  }, 60_000);

  const list = (task: string, listing: string, query: string) =>
    http(cairn.url, 'GET', `/api/v1/tasks/${gid[task] ?? task}/${listing}?${query}`, {
      headers: cairn.auth,
    });
  const nameOf = (g: string) => Object.keys(gid).find((name) => gid[name] === g);
  /** Every page of a listing, as `name:depth`, following next_offset. */
  const walk = async (task: string, listing: string, query: string) => {
    const seen: string[] = [];
    let offset: string | null = null;
    do {
      const res = await list(
        task,
        listing,
        `${query}${offset ? `&offset=${encodeURIComponent(offset)}` : ''}`,
      );
      expect(res.status, res.text).toBe(200);
      seen.push(
        ...res.body.data.map(
          (row: { gid: string; depth?: number }) =>
            `${nameOf(row.gid)}${row.depth === undefined ? '' : `:${row.depth}`}`,
        ),
      );
      offset = res.body.pagination.next_offset;
    } while (offset);
    return seen;
  };
  const byGid = (names: string[]) =>
    [...names].sort((x, y) => {
      const gx = gid[x.split(':')[0]!]!;
      const gy = gid[y.split(':')[0]!]!;
      return gx < gy ? -1 : gx > gy ? 1 : 0;
    });

  it('lists every task reachable, each once with its shortest depth, in gid order', async () => {
    const all = await walk('a', 'dependents', 'depth=all');
    expect(all).toEqual(byGid(['b:1', 'c:1', 'd:2', 'e:3']));
    for (const limit of [1, 2, 3]) {
      expect(await walk('a', 'dependents', `depth=all&limit=${limit}`)).toEqual(all);
    }
    expect(await walk('e', 'dependencies', 'depth=all&limit=1')).toEqual(
      byGid(['d:1', 'c:2', 'a:3', 'b:3']),
    );
    expect(await walk('lone', 'dependents', 'depth=all')).toEqual([]);
    // depth=1 is the direct listing, in the order the edges were added.
    expect(await walk('a', 'dependents', 'depth=1')).toEqual(['b', 'c']);
    expect(await walk('c', 'dependencies', '')).toEqual(['a', 'b']);
  });

  it('filters by status, still walking through the tasks it leaves out', async () => {
    expect(await walk('a', 'dependents', 'depth=all&status=open')).toEqual(
      byGid(['b:1', 'd:2', 'e:3']),
    );
    expect(await walk('a', 'dependents', 'depth=all&status=completed,cancelled')).toEqual(['c:1']);
    expect(await walk('a', 'dependents', 'status=completed')).toEqual(['c']);
    expect(await walk('a', 'dependents', 'status=open&status=in_progress&limit=1')).toEqual(['b']);
    expect(await walk('e', 'dependencies', 'depth=all&status=open&limit=1')).toEqual(
      byGid(['d:1', 'a:3', 'b:3']),
    );
  });

  it('adds opt_fields to transitive records', async () => {
    const res = await list('d', 'dependents', 'depth=all&opt_fields=status,project');
    expect(res.body.data).toEqual([
      {
        gid: gid.e,
        resource_type: 'task',
        name: 'e',
        status: 'open',
        project: null,
        depth: 1,
      },
    ]);
  });

  it('refuses a cursor from the other kind of walk, and bad depth or status', async () => {
    const direct = await list('a', 'dependents', 'limit=1');
    const transitive = await list('a', 'dependents', 'limit=1&depth=all');
    const cases: Array<[string, string, string]> = [
      [
        `depth=all&offset=${encodeURIComponent(direct.body.pagination.next_offset)}`,
        'offset',
        'value_error',
      ],
      [
        `offset=${encodeURIComponent(transitive.body.pagination.next_offset)}`,
        'offset',
        'value_error',
      ],
      ['depth=2', 'depth', 'enum'],
      ['depth=ALL', 'depth', 'enum'],
      ['status=open,later', 'status', 'enum'],
    ];
    for (const [query, at, type] of cases) {
      const res = await list('a', 'dependents', query);
      expect(res.status, query).toBe(422);
      expect(res.body.detail, query).toEqual([
        expect.objectContaining({ loc: ['query', at], type }),
      ]);
    }
    const elsewhere = await list(
      'b',
      'dependents',
      `depth=all&offset=${encodeURIComponent(transitive.body.pagination.next_offset)}`,
    );
    expect(elsewhere.status).toBe(422);
    const missing = await list('nope', 'dependents', 'depth=all');
    expect(missing.status).toBe(404);
  });

  it('answers a graph too large to walk with a 422 on depth', async () => {
    const db = cairn.db;
    const res = await list('fan-0', 'dependents', 'depth=all&limit=5');
    expect(res.status, res.text).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'depth'], type: 'value_error' }),
    ]);
    expect(res.body.detail[0].msg).toContain(String(MAX_WALK));
    // The direct listing of the same task still pages normally.
    const direct = await list('fan-0', 'dependents', 'limit=5');
    expect(direct.body.data).toHaveLength(5);
    // Just under the bound the walk answers.
    await sql`delete from task_dependencies where task_gid in ('fan-1', 'fan-2')`.execute(db);
    const under = await list('fan-0', 'dependents', 'depth=all&limit=2');
    expect(under.status, under.text).toBe(200);
    expect(under.body.data.map((row: { depth: number }) => row.depth)).toEqual([1, 1]);
  }, 120_000);
});
