import type { Config } from '../config/config.ts';
import { BullQueue } from './bullmq-queue.ts';
import { quickenPartCleanup } from './chdb-part-cleanup.ts';
import type { BreakerObserver } from './circuit-breaker.ts';
import { type ClickHouse, migrateClickHouse, openClickHouse } from './clickhouse.ts';
import { MemoryQueue } from './memory-queue.ts';
import {
  describeTightening,
  restrictUmask,
  type TighteningLine,
  tightenTree,
} from './owner-only.ts';
import { openPostgres, type Postgres } from './postgres.ts';
import { migratePostgres } from './postgres-migrations.ts';
import type { JobQueue } from './queue.ts';

export interface Engines {
  postgres: Postgres;
  clickhouse: ClickHouse;
  queue: JobQueue;
  /**
   * Each engine's answer to a trivial request: what /readyz reports. The queue is `degraded`
   * rather than `unavailable` when Redis does not answer: writes go on without wake-ups.
   */
  check(): Promise<Record<string, 'ok' | 'unavailable' | 'degraded'>>;
  close(): Promise<void>;
}

type EngineConfig = Pick<
  Config,
  | 'databaseUrl'
  | 'clickhouseUrl'
  | 'clickhouseCluster'
  | 'redisUrl'
  | 'redisPrefix'
  | 'dataDir'
  | 'dataPaths'
> &
  Partial<
    Pick<
      Config,
      'postgresTimeouts' | 'redisLimits' | 'postgresPrepare' | 'postgresSharedConnections'
    >
  >;

/** Opens Postgres, ClickHouse and the queue (servers where configured, embedded otherwise), migrated. */
export async function openEngines(
  config: EngineConfig,
  options: {
    /** Hears of the queue's circuit breaker (metrics, logs). */
    breakerObserver?: BreakerObserver;
    /**
     * Told what in DATA_DIR was readable by others and has been made owner-only (owner-only.ts).
     * @defaultValue a warning on stderr
     */
    onTightened?: (lines: TighteningLine[]) => void;
  } = {},
): Promise<Engines> {
  if (!config.databaseUrl || !config.clickhouseUrl) {
    restrictUmask();
    const changes = await tightenTree(config.dataDir);
    if (changes.length > 0) {
      (options.onTightened ?? warnOnStderr)(describeTightening(config.dataDir, changes));
    }
  }
  const postgres = await openPostgres({
    url: config.databaseUrl,
    dataDir: config.dataPaths.postgres,
    timeouts: config.postgresTimeouts,
    prepare: config.postgresPrepare,
    sharedConnections: config.postgresSharedConnections,
  });
  let clickhouse: ClickHouse | undefined;
  try {
    await migratePostgres(postgres.db);
    clickhouse = await openClickHouse({
      url: config.clickhouseUrl,
      dataDir: config.dataPaths.clickhouse,
    });
    await migrateClickHouse(clickhouse.client, undefined, config.clickhouseCluster);
    if (clickhouse.kind === 'chdb') await quickenPartCleanup(clickhouse.client);
  } catch (error) {
    await clickhouse?.close();
    await postgres.close();
    throw error;
  }
  const queue: JobQueue = config.redisUrl
    ? new BullQueue({
        redisUrl: config.redisUrl,
        prefix: config.redisPrefix,
        ...(config.redisLimits
          ? { guard: { ...config.redisLimits, observer: options.breakerObserver } }
          : {}),
      })
    : new MemoryQueue();
  const ch = clickhouse;
  return {
    postgres,
    clickhouse: ch,
    queue,
    async check() {
      // Only ok/unavailable: engine error text can carry host names and users.
      const probe = async (
        work: () => Promise<void>,
        failed: 'unavailable' | 'degraded' = 'unavailable',
      ) => {
        try {
          await withTimeout(work(), 2_000);
          return 'ok' as const;
        } catch {
          return failed;
        }
      };
      const [pg, chResult, q] = await Promise.all([
        probe(() => postgres.ping()),
        probe(() => ch.ping()),
        probe(() => queue.ping(), 'degraded'),
      ]);
      return { postgres: pg, clickhouse: chResult, queue: q };
    },
    async close() {
      await queue.close();
      await ch.close();
      await postgres.close();
    },
  };
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function warnOnStderr(lines: TighteningLine[]): void {
  for (const line of lines) {
    process.stderr.write(`warning: ${tighteningMessage(line)}\n`);
  }
}

/** "DATA_DIR: … was open to other users (mode 0755); now 0700", for a log line or a warning. */
export function tighteningMessage(line: TighteningLine): string {
  const what =
    line.entries > 1 ? `${line.entries} entries (${line.path}, …) were` : `${line.path} was`;
  return `DATA_DIR: ${what} open to other users (mode ${line.mode_found}); now ${line.mode_set}, the owner's alone`;
}
