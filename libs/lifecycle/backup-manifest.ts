import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** What a backup directory holds, written last: a directory without it is not a backup. */
export const MANIFEST_FILE = 'manifest.json';
export const BACKUP_FORMAT = 'cairn-embedded-backup';
export const BACKUP_FORMAT_VERSION = 1;

export interface BackupFile {
  file: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  /** The Cairn version that wrote it; a newer one restores it and migrates. */
  cairn_version: string;
  created_at: string;
  /** Where the projector had got to: ClickHouse holds exactly the outbox up to here. */
  checkpoint: { xid: string; id: number };
  postgres: BackupFile & { tasks: number; outbox: number; migrations: number };
  clickhouse: Array<BackupFile & { table: string; rows: number }>;
  /** The secrets kept beside the data (generated master key, demo token), those there are. */
  keys: BackupFile[];
}

export async function describeFile(dir: string, file: string): Promise<BackupFile> {
  const full = path.join(dir, file);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(full)) hash.update(chunk as Buffer);
  return { file, bytes: (await fs.stat(full)).size, sha256: hash.digest('hex') };
}

export async function writeManifest(dir: string, manifest: BackupManifest): Promise<void> {
  await fs.writeFile(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The manifest of the backup in `dir`, every file it names checked against its size and hash:
 * a truncated copy or a file from another backup is refused before anything is restored.
 */
export async function readManifest(dir: string): Promise<BackupManifest> {
  const text = await fs.readFile(path.join(dir, MANIFEST_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) {
    throw new Error(
      `${dir} holds no ${MANIFEST_FILE}: it is not a Cairn backup, or the backup did not finish.`,
    );
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text) as BackupManifest;
  } catch {
    throw new Error(`${path.join(dir, MANIFEST_FILE)} is not valid JSON.`);
  }
  if (manifest.format !== BACKUP_FORMAT) {
    throw new Error(`${dir} is not a Cairn embedded backup (format ${String(manifest.format)}).`);
  }
  if (manifest.format_version !== BACKUP_FORMAT_VERSION) {
    throw new Error(
      `${dir} is a backup of format version ${manifest.format_version}; this Cairn reads version ${BACKUP_FORMAT_VERSION}.`,
    );
  }
  const files = [manifest.postgres, ...manifest.clickhouse, ...manifest.keys];
  for (const expected of files) {
    const found = await describeFile(dir, expected.file).catch(() => undefined);
    if (!found) throw new Error(`The backup in ${dir} is missing ${expected.file}.`);
    if (found.bytes !== expected.bytes || found.sha256 !== expected.sha256) {
      throw new Error(
        `The backup in ${dir} is damaged: ${expected.file} does not match its manifest (size or SHA-256).`,
      );
    }
  }
  return manifest;
}

/** Cairn's version, as package.json states it. */
export async function cairnVersion(): Promise<string> {
  const text = await fs.readFile(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
