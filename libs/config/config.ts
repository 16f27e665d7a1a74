import path from 'node:path';

export type Role = 'all' | 'api' | 'projector';

export interface Config {
  readonly role: Role;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Unset means the embedded stand-in: PGlite under `dataDir/pg`. */
  readonly databaseUrl: string | undefined;
  /** Unset means the embedded stand-in: chDB under `dataDir/ch`. */
  readonly clickhouseUrl: string | undefined;
  /** Unset means the in-process queue. */
  readonly redisUrl: string | undefined;
  /** Key prefix for everything Cairn keeps in Redis, so several deployments can share one server. */
  readonly redisPrefix: string;
  readonly masterKey: string | undefined;
  /**
   * Key material for signing pagination cursors. Unset: derived from the master key, or from a
   * secret generated once and kept in Postgres, so every instance signs alike.
   */
  readonly cursorSecret: string | undefined;
  readonly queryMaxRows: number;
  readonly queryTimeoutMs: number;
  readonly staleAfterMs: number;
  /** How often the projector looks for unprojected facts when nothing woke it. */
  readonly projectorPollMs: number;
  readonly projectorBatchSize: number;
  readonly logLevel: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const ROLES: readonly Role[] = ['all', 'api', 'projector'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads every setting Cairn has from the environment, once. Collects all problems before
 * failing so an operator fixes them in one go.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
      }
    } catch {
      problems.push(`${name} is not a valid URL`);
    }
    return raw;
  };

  const roleRaw = read('CAIRN_ROLE') ?? 'all';
  if (!ROLES.includes(roleRaw as Role)) {
    problems.push(`CAIRN_ROLE must be one of ${ROLES.join(', ')} (got "${roleRaw}")`);
  }
  const role = roleRaw as Role;
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const clickhouseUrl = url('CLICKHOUSE_URL', ['http:', 'https:']);
  const redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);
  if (role !== 'all') {
    const missing = [
      ['DATABASE_URL', databaseUrl],
      ['CLICKHOUSE_URL', clickhouseUrl],
      ['REDIS_URL', redisUrl],
    ]
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
    if (missing.length > 0) {
      problems.push(
        `CAIRN_ROLE=${role} needs ${missing.join(', ')}: embedded engines live inside one process, so split roles need real servers`,
      );
    }
  }
  const cursorSecret = read('CAIRN_CURSOR_SECRET');
  if (cursorSecret !== undefined && cursorSecret.length < 32) {
    problems.push('CAIRN_CURSOR_SECRET must be at least 32 characters');
  }
  const logLevel = read('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const config: Config = {
    role,
    host: read('HOST') ?? '127.0.0.1',
    port: integer('PORT', 8080, 0, 65535),
    dataDir: path.resolve(read('DATA_DIR') ?? './.data'),
    databaseUrl,
    clickhouseUrl,
    redisUrl,
    redisPrefix: read('CAIRN_REDIS_PREFIX') ?? 'cairn',
    masterKey: read('CAIRN_MASTER_KEY'),
    cursorSecret,
    queryMaxRows: integer('CAIRN_QUERY_MAX_ROWS', 10_000, 1, 1_000_000),
    queryTimeoutMs: integer('CAIRN_QUERY_TIMEOUT_MS', 10_000, 1, 600_000),
    staleAfterMs: integer('CAIRN_STALE_AFTER_MS', 5_000, 0, 86_400_000),
    projectorPollMs: integer('CAIRN_PROJECTOR_POLL_MS', 500, 10, 60_000),
    projectorBatchSize: integer('CAIRN_PROJECTOR_BATCH_SIZE', 5_000, 1, 100_000),
    logLevel,
  };
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return Object.freeze(config);
}
