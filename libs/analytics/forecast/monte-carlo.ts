// biome-ignore-all lint/style/noNonNullAssertion: typed-array kernels index within bounds they set up themselves; a `?? 0` in their inner loops would cost on every element.
/**
 * Monte Carlo over daily throughput ("when will it be done"): each trial replays history one day
 * at a time, each day's completions drawn at random from the days of the history, until the open
 * work is done; the answer is the days each share of the trials needed.
 *
 * Deterministic: a seed fixes every draw (mulberry32, a 32-bit generator whose period of 2^32
 * draws is far beyond a run's). Days are tallied in a histogram: no trial is kept, none sorted.
 *
 * Fast without changing the answer's distribution: while a trial's remaining work exceeds what
 * even the best day of history could do in a block of 2^k days, it draws the block's total at
 * once, from the exact distribution of a sum of 2^k history days (the day distribution
 * convolved with itself, sampled with an alias table); only the last stretch goes day by day.
 * A trial of a thousand days then costs a few dozen draws (docs/benchmarks.md, "graph").
 */

/** The days a forecast looks ahead: trials not done within them are "beyond the horizon". */
export const HORIZON_DAYS = 1826;

/**
 * Bounds on the blocks: squaring a distribution costs its nonzero totals squared, and a block's
 * alias table holds every total up to its best.
 */
const SQUARING_BUDGET = 8_000_000;
const MAX_BLOCK_SUPPORT = 1 << 20;

export interface SimulationInput {
  /** Completions on each day of the history (at least one day). */
  daily: readonly number[];
  /** Tasks left to complete. */
  open: number;
  trials: number;
  seed: number;
  /** Shares of the trials, in 0–1 (0.5 for p50). */
  quantiles: readonly number[];
}

/** The total of a block of `days` history days: an alias table over totals 0…maxSum. */
interface Block {
  days: number;
  maxSum: number;
  prob: Float64Array;
  alias: Int32Array;
}

/** Vose's alias method: O(n) to build, one uniform per draw. */
function aliasTable(weights: Float64Array): { prob: Float64Array; alias: Int32Array } {
  const n = weights.length;
  const total = weights.reduce((a, b) => a + b, 0);
  const prob = new Float64Array(n);
  const alias = new Int32Array(n);
  const scaled = weights.map((w) => (w * n) / total);
  const small: number[] = [];
  const large: number[] = [];
  scaled.forEach((w, i) => {
    (w < 1 ? small : large).push(i);
  });
  while (small.length > 0 && large.length > 0) {
    const s = small.pop()!;
    const l = large.pop()!;
    prob[s] = scaled[s]!;
    alias[s] = l;
    scaled[l] = scaled[l]! + scaled[s]! - 1;
    (scaled[l]! < 1 ? small : large).push(l);
  }
  for (const i of [...small, ...large]) {
    prob[i] = 1;
    alias[i] = i;
  }
  return { prob, alias };
}

/** The distribution of the sum of two draws, over its nonzero totals only. */
function squared(p: Float64Array): Float64Array {
  const out = new Float64Array(2 * p.length - 1);
  const nonzero = nonzeroOf(p);
  for (const i of nonzero) {
    const pi = p[i]!;
    for (const j of nonzero) out[i + j]! += pi * p[j]!;
  }
  return out;
}

function nonzeroOf(p: Float64Array): number[] {
  const found: number[] = [];
  for (let i = 0; i < p.length; i++) if (p[i] !== 0) found.push(i);
  return found;
}

/**
 * Blocks of 2, 4, 8… days: only those a trial can use (the block's best total below the open
 * work) and while squaring stays cheap (SQUARING_BUDGET multiplications in all).
 */
function blocks(samples: Int32Array, best: number, open: number): Block[] {
  let dist: Float64Array = new Float64Array(best + 1);
  for (const value of samples) dist[value]! += 1 / samples.length;
  const found: Block[] = [];
  let spent = 0;
  for (let days = 2; days <= HORIZON_DAYS && 2 * (dist.length - 1) < open; days *= 2) {
    const nonzero = nonzeroOf(dist).length;
    spent += nonzero * nonzero;
    if (spent > SQUARING_BUDGET || 2 * dist.length > MAX_BLOCK_SUPPORT) break;
    dist = squared(dist);
    found.push({ days, maxSum: dist.length - 1, ...aliasTable(dist) });
  }
  return found;
}

/** For each quantile: the days by which that share of the trials was done, or null past the horizon. */
export function simulateCompletion(input: SimulationInput): Array<number | null> {
  const { daily, open, trials, quantiles } = input;
  if (open <= 0) return quantiles.map(() => 0);
  const samples = Int32Array.from(daily);
  const best = samples.reduce((a, b) => Math.max(a, b), 0);
  // No sequence of history days gets there: no trial can finish, none is run.
  if (best * HORIZON_DAYS < open) return quantiles.map(() => null);
  const levels = blocks(samples, best, open);
  const days = samples.length;
  const tally = new Int32Array(HORIZON_DAYS + 2);
  let state = input.seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let trial = 0; trial < trials; trial++) {
    let left = open;
    let day = 0;
    for (let k = levels.length - 1; k >= 0; k--) {
      const block = levels[k]!;
      const size = block.prob.length;
      // The block cannot finish the work, so the finishing day lies beyond it.
      while (left > block.maxSum && day <= HORIZON_DAYS) {
        const x = uniform() * size;
        const i = x | 0;
        left -= x - i < block.prob[i]! ? i : block.alias[i]!;
        day += block.days;
      }
    }
    while (left > 0 && day <= HORIZON_DAYS) {
      left -= samples[(uniform() * days) | 0]!;
      day++;
    }
    tally[left > 0 || day > HORIZON_DAYS ? HORIZON_DAYS + 1 : day]!++;
  }
  return quantiles.map((q) => {
    // Nearest rank: the fewest days within which at least q of the trials were done.
    const rank = Math.max(1, Math.ceil(q * trials));
    let seen = 0;
    for (let day = 0; day <= HORIZON_DAYS; day++) {
      seen += tally[day]!;
      if (seen >= rank) return day;
    }
    return null;
  });
}
