import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A name no other run will pick, for databases, key prefixes and queues made on the fly. */
export const uniqueName = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

async function onServer(serverUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh, empty database on a Postgres server (benchmarks and tests run side by side on one
 * server). The name is generated here, never taken from input, since DDL cannot bind it.
 */
export async function createScratchDatabase(
  serverUrl: string,
  prefix = 'cairn_t',
): Promise<ScratchDatabase> {
  const name = uniqueName(prefix);
  await onServer(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(serverUrl, `drop database if exists ${name} with (force)`),
  };
}
