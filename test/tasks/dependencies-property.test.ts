import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../libs/auth/principal.ts';
import { AppError } from '../../libs/http/errors.ts';
import {
  addDependencies,
  type DependencyDeps,
  edgeCursorPosition,
  listEdges,
  listWalk,
  removeDependency,
  walkCursorPosition,
} from '../../libs/tasks/dependency.service.ts';
import type { EdgeListing } from '../../libs/tasks/keyset-cursor.ts';
import { createTask } from '../../libs/tasks/task.service.ts';
import { DependenciesRefused } from '../../libs/tasks/task-errors.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';
import { openGraphStore } from '../support/graph-store.ts';

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
  /**
   * Shortest distance from `from` to every task it reaches: along edges (its dependencies) or
   * against them (its dependents).
   */
  distances(from: number, listing: EdgeListing): Map<number, number> {
    const pairs = [...this.edges].map((edge) => edge.split('>').map(Number) as [number, number]);
    const next = (at: number) =>
      listing === 'dependencies'
        ? pairs.filter(([a]) => a === at).map(([, b]) => b)
        : pairs.filter(([, b]) => b === at).map(([a]) => a);
    const depth = new Map<number, number>();
    let frontier = [from];
    for (let level = 1; frontier.length > 0; level++) {
      const found: number[] = [];
      for (const at of frontier) {
        for (const node of next(at)) {
          if (node === from || depth.has(node)) continue;
          depth.set(node, level);
          found.push(node);
        }
      }
      frontier = found;
    }
    return depth;
  }
  copy(): Model {
    const model = new Model();
    for (const edge of this.edges) model.edges.add(edge);
    return model;
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
    let store: Awaited<ReturnType<typeof openGraphStore>>;
    let deps: DependencyDeps;
    beforeAll(async () => {
      store = await openGraphStore(engine, { poolSize: 10, cursorKeyByte: 3 });
      ({ deps } = store);
    });
    afterAll(() => store?.close());

    const run = async (gids: string[], o: Op) => {
      try {
        if (o.kind === 'add') {
          await inTaskUnit(deps, (trx) =>
            addDependencies(
              trx,
              gids[o.from]!,
              o.to.map((to) => gids[to]!),
              principal,
              deps.now(),
            ),
          );
        } else {
          await inTaskUnit(deps, (trx) =>
            removeDependency(trx, gids[o.from]!, gids[o.to]!, principal, deps.now()),
          );
        }
        return 'ok';
      } catch (error) {
        if (error instanceof DependenciesRefused) return 'invalid';
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

    /** Every page of a `depth=all` listing, as `gid:depth`; `between` runs beside each page. */
    const walkAll = async (
      listing: EdgeListing,
      gid: string,
      between: () => Promise<void> = async () => {},
    ) => {
      const out: string[] = [];
      let offset: string | undefined;
      do {
        const afterGid = walkCursorPosition(deps, listing, gid, offset);
        const [page] = await Promise.all([
          listWalk(deps, listing, gid, { limit: 2, afterGid }, principal),
          between(),
        ]);
        out.push(...page.rows.map((row) => `${row.gid}:${row.depth}`));
        offset = page.nextOffset ?? undefined;
      } while (offset);
      return out;
    };
    const newGraph = async () => {
      const gids: string[] = [];
      for (let i = 0; i < TASKS; i++)
        gids.push(
          (
            await inTaskUnit(deps, (trx) =>
              createTask(trx, { business: 'acme', name: `t${i}` }, deps.now()),
            )
          ).gid,
        );
      return gids;
    };

    it('never holds a cycle, and both listings always equal the model', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 12 }), async (batches) => {
          const gids = await newGraph();
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
            for (const listing of ['dependents', 'dependencies'] as const) {
              const reached = [...model.distances(i, listing)].map(
                ([node, depth]) => `${gids[node]}:${depth}`,
              );
              expect((await walkAll(listing, gids[i]!)).sort()).toEqual(reached.sort());
            }
          }
        }),
        { numRuns: 25 },
      );
      // Hundreds of walks against a real engine: generous on a busy two-core machine.
    }, 300_000);

    it('walks every task reachable throughout a transitive walk exactly once while edges change', async () => {
      const edit = fc.oneof(
        { weight: 2, arbitrary: op },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 2, maxLength: 10 }),
          fc.integer({ min: 0, max: TASKS - 1 }),
          fc.constantFrom<EdgeListing>('dependents', 'dependencies'),
          fc.array(edit, { minLength: 1, maxLength: 8 }),
          async (setup, from, listing, edits) => {
            const gids = await newGraph();
            const model = new Model();
            for (const o of setup) if ((await run(gids, o)) === 'ok') model.apply(o);
            // The graphs the walk may have seen: the one it started on and each one after an edit.
            const states = [model.copy()];
            let next = 0;
            const listed = await walkAll(listing, gids[from]!, async () => {
              const o = edits[next++];
              if (o && (await run(gids, o)) === 'ok') {
                model.apply(o);
                states.push(model.copy());
              }
            });
            const gidsListed = listed.map((entry) => entry.split(':')[0]!);
            expect(new Set(gidsListed).size, listed.join()).toBe(gidsListed.length);
            const reachable = states.map(
              (state) => new Set([...state.distances(from, listing).keys()].map((n) => gids[n]!)),
            );
            const always = [...reachable[0]!].filter((g) => reachable.every((set) => set.has(g)));
            for (const g of always) expect(gidsListed, `${g} reachable throughout`).toContain(g);
            for (const g of gidsListed) {
              expect(
                reachable.some((set) => set.has(g)),
                `${g} never reachable`,
              ).toBe(true);
            }
            // Without an edit in between, each depth is the shortest distance.
            if (states.length === 1) {
              const depths = states[0]!.distances(from, listing);
              expect(listed.sort()).toEqual(
                [...depths].map(([n, depth]) => `${gids[n]}:${depth}`).sort(),
              );
            }
          },
        ),
        { numRuns: 25 },
      );
      // Hundreds of walks against a real engine: generous on a busy two-core machine.
    }, 300_000);
  },
);
