// biome-ignore-all lint/style/noNonNullAssertion: typed-array kernels index within bounds they set up themselves; a `?? 0` in their inner loops would cost on every element.
import { adjacency } from './adjacency.ts';
import { topologicalOrder, waiterGraph } from './blocked-counts.ts';

/**
 * The longest chain of dependencies below a root, over a DAG given as edge pairs (`waiter`
 * depends on `dependency`, both node indices; the root is a node too). Each step goes to the
 * dependency that starts the longest chain; among equal ones, the one `before` orders first.
 * Returns the chain's nodes, nearest first, without the root.
 *
 * Iterative (a topological pass), not recursive: a chain can be 100,000 tasks long.
 */
export function longestChain(
  n: number,
  root: number,
  waiter: Int32Array,
  dependency: Int32Array,
  before: (a: number, b: number) => number,
): number[] {
  const { start, list: deps } = adjacency(n, waiter, dependency);
  // Dependencies come before their waiters: each node is settled after all of its dependencies.
  const order = topologicalOrder(waiterGraph(n, waiter, dependency));
  const length = new Int32Array(n);
  const next = new Int32Array(n).fill(-1);
  for (const v of order) {
    let best = -1;
    for (let i = start[v]!; i < start[v + 1]!; i++) {
      const d = deps[i]!;
      if (
        best < 0 ||
        length[d]! > length[best]! ||
        (length[d] === length[best] && before(d, best) < 0)
      ) {
        best = d;
      }
    }
    next[v] = best;
    length[v] = best < 0 ? 1 : length[best]! + 1;
  }
  const chain: number[] = [];
  for (let v = next[root]!; v >= 0; v = next[v]!) chain.push(v);
  return chain;
}
