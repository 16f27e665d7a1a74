import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openPostgres } from '../../libs/storage/postgres.ts';
import {
  migratePostgres,
  POSTGRES_MIGRATIONS_DIR,
} from '../../libs/storage/postgres-migrations.ts';

/**
 * A migrated PGlite data directory that test files copy instead of creating their own.
 *
 * Creating a PGlite directory runs initdb inside WebAssembly: 10-35 s on a busy 2-core machine,
 * paid by almost every test file before its first test. Opening a copy of a closed one takes
 * about 2 s. The template is keyed by the migrations' text and PGlite's version, so a changed
 * migration or an upgraded PGlite makes a new one, and it is kept between runs in the temp dir.
 * Tests about creating a data directory (first start, the CLI's refusal) start without it.
 */
export async function pgliteTemplate(): Promise<string> {
  const dir = path.join(os.tmpdir(), `cairn-pglite-template-${await templateKey()}`);
  if (await exists(path.join(dir, 'PG_VERSION'))) return dir;
  const building = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-pglite-template-building-'));
  const pg = await openPostgres({ dataDir: path.join(building, 'pg') });
  try {
    await migratePostgres(pg.db);
  } finally {
    await pg.close();
  }
  // Another run may have finished one first: either copy is as good.
  await fs.rename(path.join(building, 'pg'), dir).catch(async (error: NodeJS.ErrnoException) => {
    if (!(await exists(path.join(dir, 'PG_VERSION')))) throw error;
  });
  await fs.rm(building, { recursive: true, force: true });
  return dir;
}

/**
 * Puts a copy of the template where Cairn opens its embedded Postgres (`dataPaths.postgres`),
 * unless a database is already there: that one is kept as it is.
 */
export async function seedPglite(template: string, postgresDir: string): Promise<void> {
  if (await exists(postgresDir)) return;
  await copyTree(template, postgresDir);
}

/**
 * The template's thousand small files copied all at once: `fs.cp` walks them one by one, about
 * 1.2 s a copy against under 0.1 s, paid by nearly every test file.
 */
async function copyTree(from: string, to: string): Promise<void> {
  const entries = await fs.readdir(from, { recursive: true, withFileTypes: true });
  const target = (entry: (typeof entries)[number]) =>
    path.join(to, path.relative(from, path.join(entry.parentPath, entry.name)));
  // Owner-only, as Cairn keeps its data (files keep the template's 0600).
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  // Parents sort before their children, so each mkdir finds its parent made.
  for (const dir of entries
    .filter((entry) => entry.isDirectory())
    .map(target)
    .sort()) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  }
  await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => fs.copyFile(path.join(entry.parentPath, entry.name), target(entry))),
  );
}

async function templateKey(): Promise<string> {
  const hash = createHash('sha256');
  const pglite = path.resolve(import.meta.dirname, '../../node_modules/@electric-sql/pglite');
  hash.update(await fs.readFile(path.join(pglite, 'package.json')));
  // Templates written before PGlite's files were kept owner-only are not reused.
  hash.update('owner-only');
  for (const file of (await fs.readdir(POSTGRES_MIGRATIONS_DIR)).sort()) {
    hash.update(file);
    hash.update(await fs.readFile(path.join(POSTGRES_MIGRATIONS_DIR, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
