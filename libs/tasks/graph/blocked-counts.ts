// biome-ignore-all lint/style/noNonNullAssertion: typed-array kernels index within bounds they set up themselves; a `?? 0` in their inner loops would cost on every element.
import { adjacency } from './adjacency.ts';

/**
 * Exact transitive counts over a dependency graph of open tasks, for the bottleneck ranking.
 *
 * Nodes are 0…n-1; `waiters` lists, for each node, the nodes that depend on it directly (CSR:
 * node v's waiters are `waiterList[waiterStart[v] … waiterStart[v+1])`). The graph is acyclic:
 * the write side refuses every edge that would close a cycle.
 */
export interface WaiterGraph {
  n: number;
  waiterStart: Int32Array;
  waiterList: Int32Array;
}

/** Builds the CSR form from edge pairs `(waiter[i] depends on dependency[i])`. */
export function waiterGraph(n: number, waiter: Int32Array, dependency: Int32Array): WaiterGraph {
  const { start, list } = adjacency(n, dependency, waiter);
  return { n, waiterStart: start, waiterList: list };
}

/** Dependencies before their waiters (Kahn's order); throws on a cycle, which cannot be stored. */
export function topologicalOrder(graph: WaiterGraph): Int32Array {
  const { n, waiterStart, waiterList } = graph;
  const pending = new Int32Array(n);
  for (let i = 0; i < waiterList.length; i++) pending[waiterList[i]!]!++;
  const order = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let v = 0; v < n; v++) if (pending[v] === 0) order[tail++] = v;
  while (head < tail) {
    const v = order[head++]!;
    for (let i = waiterStart[v]!; i < waiterStart[v + 1]!; i++) {
      const u = waiterList[i]!;
      if (--pending[u]! === 0) order[tail++] = u;
    }
  }
  if (tail !== n) throw new Error('the dependency graph holds a cycle');
  return order;
}

/** Candidates counted together: one bit each, 8 words of 32 bits per node. */
const WORDS = 8;
const BATCH = WORDS * 32;
/** Bit planes of a counter: counts stay below 2^17 while graphs stay below 131,072 nodes. */
const counterPlanes = (n: number) => Math.max(1, Math.ceil(Math.log2(n + 1)));

/**
 * An upper bound on each node's count of transitive waiters, cheap to compute: no more than the
 * nodes after it in topological order, and no more than the paths leaving it (exact on a tree).
 */
function upperBounds(graph: WaiterGraph, order: Int32Array): Float64Array {
  const { n, waiterStart, waiterList } = graph;
  const bound = new Float64Array(n);
  for (let p = n - 1; p >= 0; p--) {
    const v = order[p]!;
    let paths = 0;
    for (let i = waiterStart[v]!; i < waiterStart[v + 1]!; i++) paths += 1 + bound[waiterList[i]!]!;
    bound[v] = Math.min(n - 1 - p, paths);
  }
  return bound;
}

/** The graph renumbered by topological position: a pass then walks memory in order. */
function byPosition(graph: WaiterGraph, order: Int32Array, position: Int32Array): WaiterGraph {
  const { n, waiterStart, waiterList } = graph;
  const start = new Int32Array(n + 1);
  const list = new Int32Array(waiterList.length);
  let at = 0;
  for (let p = 0; p < n; p++) {
    const v = order[p]!;
    for (let i = waiterStart[v]!; i < waiterStart[v + 1]!; i++)
      list[at++] = position[waiterList[i]!]!;
    start[p + 1] = at;
  }
  return { n, waiterStart: start, waiterList: list };
}

/**
 * Exact transitive-waiter counts of up to BATCH candidates (given by topological position) in
 * one pass: each node's bitset says which candidates it waits on (pushed from dependency to
 * waiter in topological order), and the bitsets are added into bit-sliced counters (one plane
 * per bit of the count, a ripple carry per word), so counting costs words, not bits.
 */
function countBatch(positional: WaiterGraph, batch: readonly number[], bits: Int32Array): number[] {
  const { n, waiterStart, waiterList } = positional;
  const planes = counterPlanes(n);
  const counters = new Int32Array(WORDS * planes);
  let from = n;
  for (const p of batch) from = Math.min(from, p);
  bits.fill(0, from * WORDS, n * WORDS);
  batch.forEach((p, j) => {
    bits[p * WORDS + (j >>> 5)]! |= 1 << (j & 31);
  });
  for (let p = from; p < n; p++) {
    const base = p * WORDS;
    let any = 0;
    for (let w = 0; w < WORDS; w++) any |= bits[base + w]!;
    if (any === 0) continue;
    for (let i = waiterStart[p]!; i < waiterStart[p + 1]!; i++) {
      const target = waiterList[i]! * WORDS;
      for (let w = 0; w < WORDS; w++) bits[target + w]! |= bits[base + w]!;
    }
    for (let w = 0; w < WORDS; w++) {
      let carry = bits[base + w]!;
      for (let level = 0; carry !== 0 && level < planes; level++) {
        const at = w * planes + level;
        const next = counters[at]! & carry;
        counters[at]! ^= carry;
        carry = next;
      }
    }
  }
  return batch.map((_, j) => {
    const w = j >>> 5;
    let count = 0;
    for (let level = 0; level < planes; level++) {
      count += ((counters[w * planes + level]! >>> (j & 31)) & 1) << level;
    }
    // Each candidate's own bit was counted at itself.
    return count - 1;
  });
}

/**
 * Eligible nodes by decreasing bound, sorted as numbers (bound and node packed in one key, exact
 * below 2^53) rather than by a comparator: the sort of 100,000 candidates then costs
 * milliseconds. Ties stay in node order; only the ranking's tie-break needs more, and it gets it.
 */
function byBound(
  n: number,
  bound: Float64Array,
  eligible: ((node: number) => boolean) | undefined,
): Int32Array {
  const keys = new Float64Array(n);
  let count = 0;
  for (let v = 0; v < n; v++)
    if (eligible?.(v) ?? true) keys[count++] = (n - bound[v]!) * (n + 1) + v;
  const sorted = keys.subarray(0, count).sort();
  return Int32Array.from(sorted, (key) => key % (n + 1));
}

/** The `limit` first of `nodes` by `before`, without sorting them all. */
function firstBy(
  nodes: Int32Array,
  limit: number,
  before: (a: number, b: number) => number,
): number[] {
  const kept: number[] = [];
  for (const v of nodes) {
    if (kept.length === limit && before(v, kept[limit - 1]!) >= 0) continue;
    let at = kept.length;
    while (at > 0 && before(v, kept[at - 1]!) < 0) at--;
    kept.splice(at, 0, v);
    if (kept.length > limit) kept.pop();
  }
  return kept;
}

export interface RankedNode {
  node: number;
  direct: number;
  blocked: number;
}

/**
 * The `limit` nodes with the most transitive waiters, exactly, among `eligible` nodes (all when
 * undefined), ordered by `before` among equal counts. Candidates are counted in batches in
 * decreasing order of their upper bound, and counting stops once no bound left can reach the
 * ranking: on the graphs work produces (a few long-lived roots that hold up most of the rest)
 * a few batches settle it. `budget` (batches) bounds the work on any other: past it, null.
 */
export function topBlockers(
  graph: WaiterGraph,
  options: {
    limit: number;
    eligible?: (node: number) => boolean;
    before: (a: number, b: number) => number;
    budget: number;
  },
): RankedNode[] | null {
  const { n, waiterStart } = graph;
  const order = topologicalOrder(graph);
  const position = new Int32Array(n);
  for (let p = 0; p < n; p++) position[order[p]!] = p;
  const bound = upperBounds(graph, order);
  const candidates = byBound(n, bound, options.eligible);
  const direct = (v: number) => waiterStart[v + 1]! - waiterStart[v]!;
  const rank = (a: RankedNode, b: RankedNode) =>
    b.blocked - a.blocked || b.direct - a.direct || options.before(a.node, b.node);
  let best: RankedNode[] = [];
  const bits = new Int32Array(n * WORDS);
  const positional = byPosition(graph, order, position);
  let batches = 0;
  let next = 0;
  while (next < candidates.length) {
    const floor = best.length < options.limit ? -1 : best[best.length - 1]!.blocked;
    if (bound[candidates[next]!]! < floor) break;
    // A bound of 0 is exact: nothing waits on the node, so no pass is needed.
    if (bound[candidates[next]!] === 0) {
      const rest = firstBy(candidates.subarray(next), options.limit, options.before);
      best = [...best, ...rest.map((node) => ({ node, direct: 0, blocked: 0 }))]
        .sort(rank)
        .slice(0, options.limit);
      break;
    }
    if (++batches > options.budget) return null;
    const batch: number[] = [];
    while (next < candidates.length && batch.length < BATCH && bound[candidates[next]!]! > 0) {
      batch.push(candidates[next++]!);
    }
    const counts = countBatch(
      positional,
      batch.map((v) => position[v]!),
      bits,
    );
    best = [
      ...best,
      ...batch.map((node, j) => ({ node, direct: direct(node), blocked: counts[j]! })),
    ]
      .sort(rank)
      .slice(0, options.limit);
  }
  return best;
}
