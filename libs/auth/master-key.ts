import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config/config.ts';
import { secretProblem } from '../config/secret-strength.ts';
import { generateMasterKey } from './token-secret.ts';

export interface MasterKey {
  /** Undefined when no key is configured: the token endpoints then refuse everyone. */
  value: string | undefined;
  /** Where an embedded deployment keeps its generated key. */
  file: string | undefined;
  /** True only on the start that generated the key, so it is printed once. */
  generated: boolean;
}

export const MASTER_KEY_FILE = 'master.key';
/** The first start's demo token, kept beside the data like the master key. */
export const DEMO_TOKEN_FILE = 'demo.token';

/**
 * CAIRN_MASTER_KEY wins. Without it, an embedded deployment (no DATABASE_URL) generates a key
 * on first start and keeps it in DATA_DIR; a server deployment must be given one. The key file
 * passes the check CAIRN_MASTER_KEY does (config.ts): anyone who can write it could otherwise
 * set `changeme`.
 */
export async function resolveMasterKey(options: {
  configured: string | undefined;
  embedded: boolean;
  dataDir: string;
}): Promise<MasterKey> {
  if (options.configured) return { value: options.configured, file: undefined, generated: false };
  if (!options.embedded) return { value: undefined, file: undefined, generated: false };
  const file = path.join(options.dataDir, MASTER_KEY_FILE);
  try {
    return { value: checked(file, await fs.readFile(file, 'utf8')), file, generated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const value = generateMasterKey();
  await fs.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  await fs.writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error) => {
    // Another process won the race to create it: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  });
  const stored = checked(file, await fs.readFile(file, 'utf8'));
  return { value: stored, file, generated: stored === value };
}

function checked(file: string, text: string): string {
  const value = text.trim();
  const problem = secretProblem(file, value);
  if (problem !== undefined) throw new ConfigError(problem);
  return value;
}
