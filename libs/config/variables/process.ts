import type { Area } from '../variable.ts';
import { choice, directory, integer, text } from '../variable-kinds.ts';
import { CLICKHOUSE_URL, DATABASE_URL, REDIS_URL } from './engines.ts';

export const HOST = text({ name: 'HOST', default: '127.0.0.1', doc: 'interface to listen on' });

export const PORT = integer({
  name: 'PORT',
  default: 8080,
  min: 0,
  max: 65535,
  doc: 'port to listen on',
});

export const DATA_DIR = directory({
  name: 'DATA_DIR',
  default: './.data',
  doc: "embedded engines' files (`pg/`, `ch/`), the owner's alone ([owner-only files](operations.md#owner-only-files))",
});

export const CAIRN_ROLE = choice({
  name: 'CAIRN_ROLE',
  values: ['all', 'api', 'projector'],
  oneOf: true,
  default: 'all',
  doc: '`all` (api + projector), `api` or `projector` ([roles](operations.md#roles-and-scaling))',
  check(role, read) {
    if (role === 'all') return undefined;
    const missing = [DATABASE_URL, CLICKHOUSE_URL, REDIS_URL]
      .filter((engine) => read(engine) === undefined)
      .map((engine) => engine.name);
    return missing.length === 0
      ? undefined
      : `CAIRN_ROLE=${role} needs ${missing.join(', ')}: embedded engines live inside one process, so split roles need real servers`;
  },
});

export const LOG_LEVEL = choice({
  name: 'LOG_LEVEL',
  values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
  oneOf: true,
  default: 'info',
  doc: 'pino level (`silent` to mute)',
});

// Under Kubernetes' default 30 s grace.
export const CAIRN_SHUTDOWN_TIMEOUT_MS = integer({
  name: 'CAIRN_SHUTDOWN_TIMEOUT_MS',
  default: 25_000,
  min: 1_000,
  max: 3_600_000,
  doc: "how long SIGTERM waits for accepted requests, the running query and the projector's batch before exiting 1 anyway",
});

export const PROCESS: Area = {
  title: 'Process and data',
  variables: [HOST, PORT, DATA_DIR, CAIRN_ROLE, LOG_LEVEL, CAIRN_SHUTDOWN_TIMEOUT_MS],
};
