import { afterAll, beforeAll } from 'vitest';
import type { AnalyticsDeps } from '../../libs/analytics/query.service.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { analyticsDeps, projectAll } from './analytics.ts';
import { type ModelFact, simulate } from './analytics-model.ts';
import { type TestConfig, testConfig } from './engines.ts';

/** A suite's engines holding one simulated history, projected, and the read side at `now`. */
export interface SimulatedHistory {
  engines: Engines;
  deps: AnalyticsDeps;
  facts: ModelFact[];
  businesses: string[];
}

/**
 * Opens embedded engines for the suite, writes the history `simulate` draws from `seed` through
 * the write side and projects it (in batches of 500, so rollups hold unmerged parts); closes
 * them after. The members are filled in before the suite's tests run.
 */
export function useSimulatedHistory(
  seed: number,
  window: { start: number; now: Date; events?: number; extra?: number[] },
): SimulatedHistory {
  const history = {} as SimulatedHistory;
  let setup: TestConfig | undefined;
  beforeAll(async () => {
    setup = await testConfig();
    history.engines = await openEngines(setup.config);
    history.deps = analyticsDeps(history.engines, { now: () => window.now });
    const { facts, businesses } = await simulate(history.engines, seed, {
      ...window,
      now: window.now.getTime(),
    });
    Object.assign(history, { facts, businesses });
    await projectAll(history.engines, 500);
  }, 300_000);
  afterAll(async () => {
    await history.engines?.close();
    await setup?.cleanup();
  });
  return history;
}
