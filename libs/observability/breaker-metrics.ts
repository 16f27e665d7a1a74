import client from 'prom-client';
import { BREAKER_STATES, type BreakerObserver } from '../storage/circuit-breaker.ts';
import type { Logger } from './logger.ts';

/**
 * The circuit breakers' metric families, and their log lines: one when a breaker leaves
 * `closed` and one when it closes again. The flips between open and half-open while the
 * server stays away, and every call refused meanwhile, are counted, not logged.
 */
export function circuitBreakerMetrics(registry: client.Registry, logger: Logger): BreakerObserver {
  const registers = [registry];
  const state = new client.Gauge({
    name: 'cairn_circuit_breaker_state',
    help: 'Circuit breakers around Redis on the request path: 1 for the state each is in (closed, open, half_open), 0 for the others.',
    labelNames: ['breaker', 'state'] as const,
    registers,
  });
  const transitions = new client.Counter({
    name: 'cairn_circuit_breaker_transitions_total',
    help: 'Changes of state of each circuit breaker, by the state entered.',
    labelNames: ['breaker', 'to'] as const,
    registers,
  });
  const shortCircuits = new client.Counter({
    name: 'cairn_circuit_breaker_short_circuits_total',
    help: 'Calls refused at once by an open circuit breaker (the caller took its fallback).',
    labelNames: ['breaker'] as const,
    registers,
  });
  return {
    changed({ breaker, whileOpen, from, to, error }) {
      for (const each of BREAKER_STATES) state.set({ breaker, state: each }, each === to ? 1 : 0);
      if (from === undefined) {
        // Present from the start, so a dashboard can tell "never opened" from "no data".
        transitions.inc({ breaker, to: 'open' }, 0);
        shortCircuits.inc({ breaker }, 0);
        return;
      }
      transitions.inc({ breaker, to });
      if (from === 'closed') {
        logger.warn({ breaker, err: error }, `Redis not answering: ${breaker} open; ${whileOpen}`);
      } else if (to === 'closed') {
        logger.info({ breaker }, `Redis answering again: ${breaker} closed`);
      }
    },
    shortCircuited(breaker) {
      shortCircuits.inc({ breaker });
    },
  };
}
