import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  topBlockers,
  topologicalOrder,
  waiterGraph,
} from '../../libs/tasks/graph/blocked-counts.ts';
import { longestChain } from '../../libs/tasks/graph/longest-chain.ts';

/** A DAG over n nodes: each edge goes from a later node (the waiter) to an earlier one. */
const dags = fc
  .integer({ min: 1, max: 60 })
  .chain((n) =>
    fc
      .uniqueArray(
        fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 0, max: n - 1 })),
        { maxLength: 4 * n, selector: ([a, b]) => `${a},${b}` },
      )
      .map((pairs) => {
        const edges = pairs
          .filter(([a, b]) => a !== b)
          .map(([a, b]) => [Math.max(a, b), Math.min(a, b)] as const);
        const unique = [...new Map(edges.map((e) => [`${e[0]},${e[1]}`, e])).values()];
        return { n, edges: unique };
      }),
  )
  // Node numbers scrambled, so the topological order is not the numbering.
  .chain(({ n, edges }) =>
    fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }).map((perm) => ({
      n,
      edges: edges.map(([w, d]) => [perm[w]!, perm[d]!] as const),
    })),
  );

/** Transitive waiters of each node by breadth-first search: the oracle. */
function waitersByWalk(n: number, edges: ReadonlyArray<readonly [number, number]>): number[] {
  const waiters = Array.from({ length: n }, () => [] as number[]);
  for (const [w, d] of edges) waiters[d]!.push(w);
  return [...Array(n).keys()].map((v) => {
    const seen = new Set<number>();
    const queue = [...waiters[v]!];
    while (queue.length > 0) {
      const u = queue.pop()!;
      if (seen.has(u)) continue;
      seen.add(u);
      queue.push(...waiters[u]!);
    }
    return seen.size;
  });
}

/** Length of the longest dependency chain from each node (itself included), by recursion. */
function chainLengths(n: number, edges: ReadonlyArray<readonly [number, number]>): number[] {
  const memo = new Map<number, number>();
  const deps = Array.from({ length: n }, () => [] as number[]);
  for (const [w, d] of edges) deps[w]!.push(d);
  const length = (v: number): number => {
    const known = memo.get(v);
    if (known !== undefined) return known;
    const found = 1 + Math.max(0, ...deps[v]!.map(length));
    memo.set(v, found);
    return found;
  };
  return [...Array(n).keys()].map(length);
}

const graphOf = (n: number, edges: ReadonlyArray<readonly [number, number]>) =>
  waiterGraph(n, Int32Array.from(edges.map((e) => e[0])), Int32Array.from(edges.map((e) => e[1])));

describe('exact transitive counts', () => {
  it('ranks exactly as a walk from every node does, at any limit and eligibility', () => {
    fc.assert(
      fc.property(
        dags,
        fc.integer({ min: 1, max: 30 }),
        fc.boolean(),
        ({ n, edges }, limit, odd) => {
          const counts = waitersByWalk(n, edges);
          const direct = [...Array(n).keys()].map((v) => edges.filter((e) => e[1] === v).length);
          const eligible = (v: number) => !odd || v % 2 === 1;
          const expected = [...Array(n).keys()]
            .filter(eligible)
            .sort((a, b) => counts[b]! - counts[a]! || direct[b]! - direct[a]! || a - b)
            .slice(0, limit)
            .map((node) => ({ node, direct: direct[node]!, blocked: counts[node]! }));
          const ranked = topBlockers(graphOf(n, edges), {
            limit,
            before: (a, b) => a - b,
            budget: 1_000,
            ...(odd ? { eligible } : {}),
          });
          expect(ranked).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts batches of more than 256 candidates and more than 2^16 waiters', () => {
    // A chain of 70,000: node i waits on i - 1, so node v holds up everything after it.
    const n = 70_000;
    const edges = Array.from({ length: n - 1 }, (_, i) => [i + 1, i] as const);
    const ranked = topBlockers(graphOf(n, edges), {
      limit: 300,
      before: (a, b) => a - b,
      budget: 10,
    });
    expect(ranked?.map((r) => r.blocked)).toEqual(Array.from({ length: 300 }, (_, i) => n - 1 - i));
  });

  it('gives up (null) past its budget of counting passes instead of running on', () => {
    const n = 600;
    const edges = Array.from({ length: n - 1 }, (_, i) => [i + 1, i] as const);
    // The bound prunes a chain after one pass; a budget of none refuses the first.
    expect(
      topBlockers(graphOf(n, edges), { limit: 5, before: (a, b) => a - b, budget: 0 }),
    ).toBeNull();
    expect(
      topBlockers(graphOf(n, edges), { limit: 5, before: (a, b) => a - b, budget: 1 }),
    ).not.toBeNull();
  });

  it('refuses a cycle, which the write side never stores', () => {
    expect(() =>
      topologicalOrder(
        graphOf(2, [
          [0, 1],
          [1, 0],
        ]),
      ),
    ).toThrow(/cycle/);
  });
});

describe('longest chain', () => {
  it('follows a longest chain, the first by `before` among equals', () => {
    fc.assert(
      fc.property(dags, fc.nat(), ({ n, edges }, pick) => {
        const root = pick % n;
        const lengths = chainLengths(n, edges);
        const chain = longestChain(
          n,
          root,
          Int32Array.from(edges.map((e) => e[0])),
          Int32Array.from(edges.map((e) => e[1])),
          (a, b) => a - b,
        );
        expect(chain.length).toBe(lengths[root]! - 1);
        let at = root;
        for (const next of chain) {
          const options = edges.filter((e) => e[0] === at).map((e) => e[1]);
          const longest = Math.max(...options.map((d) => lengths[d]!));
          expect(next).toBe(Math.min(...options.filter((d) => lengths[d] === longest)));
          at = next;
        }
      }),
      { numRuns: 300 },
    );
  });
});
