import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { DEMO_TOKEN_FILE, MASTER_KEY_FILE } from '../auth/master-key.ts';
import { writeOwnerOnlyFile } from '../storage/owner-only.ts';

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
  /** The installation's erasure ledger (erasure-ledger.ts); backups written before it have none. */
  erasures?: BackupFile & { entries: number };
}

/** Files beside the data that a restored installation needs to keep its tokens and cursors valid. */
export const KEY_FILES = [MASTER_KEY_FILE, DEMO_TOKEN_FILE];

export async function describeFile(dir: string, file: string): Promise<BackupFile> {
  const full = path.join(dir, file);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(full)) hash.update(chunk as Buffer);
  return { file, bytes: (await fs.stat(full)).size, sha256: hash.digest('hex') };
}

export async function writeManifest(dir: string, manifest: BackupManifest): Promise<void> {
  await writeOwnerOnlyFile(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The manifest of the backup in `dir`, checked before anything is restored: its shape; every
 * file it names a plain name inside `dir` (a manifest is data from outside, and a restore copies
 * what it names into DATA_DIR); the tables every backup holds; each file's size and hash, so a
 * truncated copy or a file from another backup is refused.
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
  if (manifest?.format !== BACKUP_FORMAT) {
    throw new Error(`${dir} is not a Cairn embedded backup (format ${String(manifest?.format)}).`);
  }
  if (manifest.format_version !== BACKUP_FORMAT_VERSION) {
    throw new Error(
      `${dir} is a backup of format version ${manifest.format_version}; this Cairn reads version ${BACKUP_FORMAT_VERSION}.`,
    );
  }
  const refuse = (what: string) =>
    new Error(`The manifest of the backup in ${dir} ${what}: refused, nothing was restored.`);
  if (!validateShape(manifest)) {
    const [error] = validateShape.errors ?? [];
    throw refuse(`is not valid (${entryName(error?.instancePath ?? '')} ${error?.message})`);
  }
  const files = namedFiles(manifest);
  for (const { entry, file } of files) {
    if (!PLAIN_NAME.test(file)) {
      throw refuse(
        `names ${entry} "${file}", which is not a plain file name (no folders, no "..", no absolute paths)`,
      );
    }
  }
  manifest.keys.forEach((key, index) => {
    if (!KEY_FILES.includes(key.file)) {
      throw refuse(
        `names keys[${index}].file "${key.file}", which is not a key file (${KEY_FILES.join(', ')})`,
      );
    }
  });
  const tables = manifest.clickhouse.map((saved) => saved.table);
  const twice = tables.find((table, index) => tables.indexOf(table) !== index);
  if (twice) throw refuse(`lists the ClickHouse table ${twice} twice`);
  const missing = ALWAYS_SAVED.filter((table) => !tables.includes(table));
  if (missing.length > 0) {
    throw refuse(`lists no ClickHouse table ${missing.join(' or ')}, which every backup holds`);
  }
  for (const { file, bytes, sha256 } of files) {
    const found = await describeFile(dir, file).catch(() => undefined);
    if (!found) throw new Error(`The backup in ${dir} is missing ${file}.`);
    if (found.bytes !== bytes || found.sha256 !== sha256) {
      throw new Error(
        `The backup in ${dir} is damaged: ${file} does not match its manifest (size or SHA-256).`,
      );
    }
  }
  return manifest;
}

/** Every file the manifest names, with the entry that names it. */
function namedFiles(manifest: BackupManifest): Array<BackupFile & { entry: string }> {
  return [
    { entry: 'postgres.file', ...manifest.postgres },
    ...manifest.clickhouse.map((saved, i) => ({ entry: `clickhouse[${i}].file`, ...saved })),
    ...manifest.keys.map((key, i) => ({ entry: `keys[${i}].file`, ...key })),
    ...(manifest.erasures ? [{ entry: 'erasures.file', ...manifest.erasures }] : []),
  ];
}

/** `/clickhouse/0/rows` as `clickhouse[0].rows`. */
const entryName = (pointer: string): string =>
  pointer
    .split('/')
    .slice(1)
    .reduce(
      (name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part),
      '',
    ) || 'the manifest';

/**
 * A file name as backups write them (`clickhouse-facts.native.zst`, `master.key`): no folder,
 * no `..`, nothing absolute, nothing hidden.
 */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** Tables every backup of any version holds; which rollups it must hold its rollup_builds says. */
export const ALWAYS_SAVED = ['facts', 'rollup_builds'];

const count = { type: 'integer', minimum: 0 } as const;
const fileShape = {
  file: { type: 'string' },
  bytes: count,
  sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
} as const;
const fileEntry = (extra: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  required: ['file', 'bytes', 'sha256', ...required],
  properties: { ...fileShape, ...extra },
});

const validateShape = new Ajv().compile<BackupManifest>({
  type: 'object',
  required: ['cairn_version', 'created_at', 'checkpoint', 'postgres', 'clickhouse', 'keys'],
  properties: {
    cairn_version: { type: 'string' },
    created_at: { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z$' },
    checkpoint: {
      type: 'object',
      required: ['xid', 'id'],
      properties: { xid: { type: 'string', pattern: '^\\d+$' }, id: count },
    },
    postgres: fileEntry({ tasks: count, outbox: count, migrations: count }, [
      'tasks',
      'outbox',
      'migrations',
    ]),
    clickhouse: {
      type: 'array',
      items: fileEntry(
        { table: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, rows: count },
        ['table', 'rows'],
      ),
    },
    keys: { type: 'array', items: fileEntry({}, []) },
    erasures: fileEntry({ entries: count }, ['entries']),
  },
});

/** Cairn's version, as package.json states it. */
export async function cairnVersion(): Promise<string> {
  const text = await fs.readFile(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
