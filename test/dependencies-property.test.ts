import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../libs/auth/principal.ts';
import { AppError, ValidationError } from '../libs/platform/errors.ts';
import { openPostgres, type Postgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import {
  addDependencies,
  type DependencyDeps,
  edgeCursorPosition,
  listEdges,
  removeDependency,
} from '../libs/tasks/dependency.service.ts';
import type { EdgeListing } from '../libs/tasks/keyset-cursor.ts';
import { createTask } from '../libs/tasks/task.service.ts';
import { createTestDatabase, type TestDatabase, tempDir } from './support/engines.ts';

const principal: Principal = {
  kind: 'token',
  id: 'tok_test',
  tokenKind: 'user',
  scopes: ['workflows:read', 'workflows:write'],
  businesses: ['acme'],
};
const TASKS = 6;

type Op =
  | { kind: 'add'; from: number; to: number[] }
  | { kind: 'remove'; from: number; to: number };

const index = fc.integer({ min: 0, max: TASKS - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      from: index,
      to: fc.uniqueArray(index, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('remove' as const), from: index, to: index }),
  },
);
/** A batch runs concurrently; its ops touch disjoint edges so the final graph is order-free. */
const batch = fc.array(op, { minLength: 1, maxLength: 4 }).map((ops) => {
  const touched = new Set<string>();
  return ops.filter((o) => {
    const pairs = (o.kind === 'add' ? o.to : [o.to]).map((to) => `${o.from}>${to}`);
    if (pairs.some((pair) => touched.has(pair))) return false;
    for (const pair of pairs) touched.add(pair);
    return true;
  });
});

/** The simple model: a set of `from>to` edges. */
class Model {
  readonly edges = new Set<string>();
  reaches(from: number, target: number): boolean {
    const seen = new Set([from]);
    const queue = [from];
    while (queue.length > 0) {
      const at = queue.shift()!;
      if (at === target) return true;
      for (const edge of this.edges) {
        const [a, b] = edge.split('>').map(Number) as [number, number];
        if (a === at && !seen.has(b)) {
          seen.add(b);
          queue.push(b);
        }
      }
    }
    return false;
  }
  /** What a request alone on this graph must answer. */
  expect(o: Op): 'ok' | 'conflict' | 'invalid' | 'not_found' {
    if (o.kind === 'remove') return this.edges.has(`${o.from}>${o.to}`) ? 'ok' : 'not_found';
    if (o.to.includes(o.from)) return 'invalid';
    return o.to.some((to) => this.reaches(to, o.from)) ? 'conflict' : 'ok';
  }
  apply(o: Op): void {
    if (o.kind === 'remove') this.edges.delete(`${o.from}>${o.to}`);
    else for (const to of o.to) this.edges.add(`${o.from}>${to}`);
  }
  acyclic(): boolean {
    return [...Array(TASKS).keys()].every(
      (node) =>
        ![...this.edges].some(
          (edge) => edge.startsWith(`${node}>`) && this.reaches(Number(edge.split('>')[1]), node),
        ),
    );
  }
}

describe.each(['postgres', 'pglite'] as const)(
  'dependency graph against a model on %s',
  (engine) => {
    let database: TestDatabase | undefined;
    let pg: Postgres;
    let deps: DependencyDeps;
    beforeAll(async () => {
      if (engine === 'postgres') {
        database = await createTestDatabase();
        pg = await openPostgres({ url: database.url, poolSize: 10 });
      } else {
        pg = await openPostgres({ dataDir: `${await tempDir()}/pg` });
      }
      await migratePostgres(pg.db);
      deps = {
        db: pg.db,
        now: () => new Date(),
        factsCommitted: () => {},
        cursorKey: Buffer.alloc(32, 3),
      };
    });
    afterAll(async () => {
      await pg.close();
      await database?.drop();
    });

    const run = async (gids: string[], o: Op) => {
      try {
        if (o.kind === 'add') {
          await addDependencies(
            deps,
            gids[o.from]!,
            o.to.map((to) => gids[to]!),
            principal,
          );
        } else {
          await removeDependency(deps, gids[o.from]!, gids[o.to]!, principal);
        }
        return 'ok';
      } catch (error) {
        if (error instanceof ValidationError) return 'invalid';
        if (error instanceof AppError) return error.code;
        throw error;
      }
    };
    const walk = async (listing: EdgeListing, gid: string) => {
      const out: string[] = [];
      let offset: string | undefined;
      do {
        const afterId = edgeCursorPosition(deps, listing, gid, offset);
        const page = await listEdges(deps, listing, gid, { limit: 2, afterId }, principal);
        out.push(...page.rows.map((row) => row.gid));
        offset = page.nextOffset ?? undefined;
      } while (offset);
      return out;
    };

    it('never holds a cycle, and both listings always equal the model', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 12 }), async (batches) => {
          const gids: string[] = [];
          for (let i = 0; i < TASKS; i++)
            gids.push((await createTask(deps, { business: 'acme', name: `t${i}` })).gid);
          const model = new Model();
          for (const ops of batches) {
            if (ops.length === 1) {
              const expected = model.expect(ops[0]!);
              expect(await run(gids, ops[0]!)).toBe(expected);
              if (expected === 'ok') model.apply(ops[0]!);
            } else {
              const outcomes = await Promise.all(ops.map((o) => run(gids, o)));
              ops.forEach((o, i) => {
                if (outcomes[i] === 'ok') model.apply(o);
                else if (outcomes[i] !== 'conflict') expect(outcomes[i]).toBe(model.expect(o));
              });
            }
            expect(model.acyclic()).toBe(true);
          }
          for (let i = 0; i < TASKS; i++) {
            const dependents = [...model.edges]
              .filter((e) => e.endsWith(`>${i}`))
              .map((e) => gids[Number(e.split('>')[0])]);
            const dependencies = [...model.edges]
              .filter((e) => e.startsWith(`${i}>`))
              .map((e) => gids[Number(e.split('>')[1])]);
            expect((await walk('dependents', gids[i]!)).sort()).toEqual(dependents.sort());
            expect((await walk('dependencies', gids[i]!)).sort()).toEqual(dependencies.sort());
          }
        }),
        { numRuns: 25 },
      );
    });
  },
);
