/**
 * Cairn as `npm start` runs it (embedded engines, the demo dataset on a first start), with the
 * rate limits raised: Schemathesis sends thousands of requests a minute, most of them from one
 * address without a token (its auth checks), and it must hear each operation's own answer (401
 * and the rest) rather than 429 once the anonymous 60 a minute are spent. Rate limiting itself
 * is tested in test/rate-limit*.test.ts; 429 stays documented on every operation.
 *
 *   DATA_DIR=… PORT=… npx tsx .ci/schemathesis/serve.ts
 */
import { startCairn } from '../../apps/server/cairn.ts';
import { announceStart, isFirstStart } from '../../apps/server/first-start.ts';
import { loadConfig } from '../../libs/config/config.ts';
import { createLogger } from '../../libs/observability/logger.ts';

const UNLIMITED = 1_000_000_000;
const config = loadConfig();
const logger = createLogger(config.logLevel);
const firstStart = await isFirstStart(config);
const cairn = await startCairn({
  config,
  logger,
  rateLimits: { anonymous: UNLIMITED, user: UNLIMITED, service_account: UNLIMITED },
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    cairn.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
await announceStart(cairn, firstStart);
process.stdout.write(`ready ${cairn.url}\n`);
