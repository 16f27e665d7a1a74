import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * An embedded server holds its data directory alone (PGlite allows one process), so it leaves
 * its address there: a CLI started beside it can then do its work through the HTTP API instead.
 */
const FILE = 'server.json';

export interface RunningServer {
  pid: number;
  url: string;
}

/** Records this process's address in `dataDir`; the returned function removes it. */
export async function advertiseServer(dataDir: string, url: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, FILE);
  const body: RunningServer = { pid: process.pid, url };
  await fs.writeFile(file, `${JSON.stringify(body)}\n`, { mode: 0o600 });
  return async () => {
    await fs.rm(file, { force: true });
  };
}

/** The server process `pid` advertised in `dataDir`, if it did. */
export async function findRunningServer(
  dataDir: string,
  pid: number,
): Promise<RunningServer | undefined> {
  const text = await fs.readFile(path.join(dataDir, FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const server = JSON.parse(text) as RunningServer;
    return server.pid === pid && typeof server.url === 'string' ? server : undefined;
  } catch {
    return undefined;
  }
}
