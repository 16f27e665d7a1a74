import { ConfigError, loadConfig } from '../../libs/config/config.ts';
import { createLogger } from '../../libs/observability/logger.ts';
import { startCairn } from './cairn.ts';
import { announceStart, isFirstStart, masterKeyNotice, say } from './first-start.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  // Asked before the engines open, because opening them fills the data directory.
  const firstStart = await isFirstStart(config);
  const cairn = await startCairn({ config, logger });
  const engines = [
    `postgres=${cairn.engines.postgres.kind}`,
    `clickhouse=${cairn.engines.clickhouse.kind}`,
    `queue=${cairn.engines.queue.kind}`,
  ].join(' ');
  logger.info(
    { role: config.role, url: cairn.url, dataDir: config.dataDir },
    `cairn started (${engines})`,
  );
  // A projector serves no pages; every other role offers the explorer to a person first.
  const explorer = config.role === 'projector' ? '' : `; explorer: ${cairn.url}/explore`;
  say(`Cairn (${config.role}) is serving on ${cairn.url} (${engines})${explorer}\n`);
  say(masterKeyNotice(cairn));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error('shutdown deadline passed: exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    cairn.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // After the signal handlers, so a demo load can be interrupted cleanly.
  await announceStart(cairn, firstStart);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `cairn failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
