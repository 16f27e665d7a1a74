import type { Area } from './variable.ts';
import { ANALYTICS } from './variables/analytics.ts';
import { ENGINES } from './variables/engines.ts';
import { HTTP } from './variables/http.ts';
import { POSTGRES } from './variables/postgres.ts';
import { PROCESS } from './variables/process.ts';
import { PROJECTOR } from './variables/projector.ts';
import { REDIS } from './variables/redis.ts';
import { RUNTIME } from './variables/runtime.ts';
import { SECRETS } from './variables/secrets.ts';
import { TRACING } from './variables/tracing.ts';

/** Every variable Cairn reads, by area, in the order of docs/configuration.md. */
export const AREAS: readonly Area[] = [
  PROCESS,
  ENGINES,
  SECRETS,
  ANALYTICS,
  PROJECTOR,
  POSTGRES,
  REDIS,
  HTTP,
  RUNTIME,
  TRACING,
];
