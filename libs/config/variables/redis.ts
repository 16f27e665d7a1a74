import type { Area } from '../variable.ts';
import { integer, text } from '../variable-kinds.ts';

// Several deployments can share one server, each under its own prefix.
export const CAIRN_REDIS_PREFIX = text({
  name: 'CAIRN_REDIS_PREFIX',
  default: 'cairn',
  doc: 'key prefix in Redis',
});

export const CAIRN_REDIS_COMMAND_TIMEOUT_MS = integer({
  name: 'CAIRN_REDIS_COMMAND_TIMEOUT_MS',
  default: 500,
  min: 10,
  max: 60_000,
  doc: 'one Redis command for rate limits or a projector wake-up; past it, a failure',
});

export const CAIRN_REDIS_BREAKER_FAILURES = integer({
  name: 'CAIRN_REDIS_BREAKER_FAILURES',
  default: 3,
  min: 1,
  max: 1_000,
  doc: 'failures in a row that open a Redis circuit breaker (see Operating notes)',
});

export const CAIRN_REDIS_BREAKER_COOLDOWN_MS = integer({
  name: 'CAIRN_REDIS_BREAKER_COOLDOWN_MS',
  default: 5_000,
  min: 100,
  max: 600_000,
  doc: 'how long an open breaker answers without Redis before one call tries it again',
});

export const REDIS: Area = {
  title: 'Redis',
  variables: [
    CAIRN_REDIS_PREFIX,
    CAIRN_REDIS_COMMAND_TIMEOUT_MS,
    CAIRN_REDIS_BREAKER_FAILURES,
    CAIRN_REDIS_BREAKER_COOLDOWN_MS,
  ],
};
