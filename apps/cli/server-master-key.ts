import fs from 'node:fs/promises';
import path from 'node:path';
import { MASTER_KEY_FILE } from '../../libs/auth/master-key.ts';
import type { Config } from '../../libs/config/config.ts';

/**
 * The master key of the embedded server that holds DATA_DIR, for a command that goes through
 * it: CAIRN_MASTER_KEY when set, else the key a first start generated into DATA_DIR. A server
 * started with CAIRN_MASTER_KEY writes no key file, so its absence is said in words, naming both
 * places, never as a bare ENOENT.
 */
export async function serverMasterKey(config: Config, url: string, doing: string): Promise<string> {
  if (config.masterKey !== undefined) return config.masterKey;
  const file = path.join(config.dataDir, MASTER_KEY_FILE);
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(
      `the Cairn server at ${url} holds this DATA_DIR, and ${doing} through it needs its master key: CAIRN_MASTER_KEY is unset and there is no key file ${file} (a server started with CAIRN_MASTER_KEY writes none). Set CAIRN_MASTER_KEY to the key the server was started with.`,
    );
  }
}
