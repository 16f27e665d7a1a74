import type { Config } from '../../libs/config/config.ts';
import { openControlChannel } from '../../libs/lifecycle/control-channel.ts';
import { takeBackup } from '../../libs/lifecycle/embedded-backup.ts';
import type { Engines } from '../../libs/storage/engines.ts';
import { advertiseServer } from '../../libs/storage/running-server.ts';
import type { Lifecycle } from './lifecycle.ts';

/**
 * How a CLI started beside a server on embedded engines reaches it: the control channel (only the
 * holder of the embedded engines can copy them: `cli backup` asks it there), then the server's
 * address in the data directory (tokens commands and an erasure work through its HTTP API).
 */
export async function openEmbeddedAccess(
  lifecycle: Lifecycle,
  { config, engines, url }: { config: Config; engines: Engines; url: string },
): Promise<void> {
  const { postgres, clickhouse } = config.embedded;
  if (postgres && clickhouse) {
    const control = await openControlChannel(config.dataDir, {
      backup: (to, onProgress) =>
        takeBackup({
          postgres: engines.postgres,
          clickhouse: engines.clickhouse.client,
          dataDir: config.dataDir,
          to,
          onProgress,
        }),
    });
    lifecycle.adopt('control channel', control);
  }
  if (postgres || clickhouse) {
    lifecycle.started('server address', await advertiseServer(config.dataDir, url));
  }
}
