import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

// `npm ci` refuses a lockfile that leaves out any optional dependency, even another platform's
// binary; .ci/run proves it with `npm ci` on a clean clone, this test names the culprit quickly.
const lock = JSON.parse(await fs.readFile('package-lock.json', 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const manifest = JSON.parse(await fs.readFile('package.json', 'utf8'));

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function resolve(parentPath: string, name: string): LockEntry | undefined {
  let dir = parentPath;
  for (;;) {
    const entry = lock.packages[`${dir ? `${dir}/` : ''}node_modules/${name}`];
    if (entry) return entry;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  it('describes package.json exactly', () => {
    const root = lock.packages['']!;
    for (const kind of ['dependencies', 'devDependencies', 'optionalDependencies'] as const)
      expect(root[kind] ?? {}, kind).toEqual(manifest[kind] ?? {});
  });

  it('holds every dependency of every package, other platforms’ optional binaries included', () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const wanted = {
        ...entry.dependencies,
        ...entry.optionalDependencies,
        ...(path === '' ? entry.devDependencies : {}),
      };
      for (const name of Object.keys(wanted))
        if (!resolve(path, name)) missing.push(`${name} (for ${path || 'the project'})`);
    }
    expect(missing).toEqual([]);
  });

  it('marks other platforms’ binaries optional with the platform their name states', () => {
    expect(lock.packages['node_modules/@biomejs/cli-darwin-arm64']).toMatchObject({
      optional: true,
      dev: true,
      os: ['darwin'],
      cpu: ['arm64'],
    });
    expect(lock.packages['node_modules/@chdb/lib-linux-arm64-gnu']).toMatchObject({
      optional: true,
      os: ['linux'],
      cpu: ['arm64'],
      libc: ['glibc'],
    });
  });

  it('is what npm itself writes: `npm install` on a fresh clone leaves it byte for byte', async () => {
    // A package-lock-only install reads and rewrites the lockfile as a full one does, without
    // touching the node_modules every test shares; offline, since the lockfile names everything.
    const clone = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-lock-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc'])
        await fs.copyFile(file, path.join(clone, file));
      await run(
        'npm',
        [
          'install',
          '--package-lock-only',
          '--ignore-scripts',
          '--offline',
          '--no-audit',
          '--no-fund',
        ],
        { cwd: clone },
      );
      const rewritten = await fs.readFile(path.join(clone, 'package-lock.json'), 'utf8');
      expect(rewritten === (await fs.readFile('package-lock.json', 'utf8'))).toBe(true);
    } finally {
      await fs.rm(clone, { recursive: true, force: true });
    }
  }, 120_000);

  it('names no tarball URL, on any machine’s npm configuration (.npmrc)', async () => {
    expect(await fs.readFile('.npmrc', 'utf8')).toMatch(/^omit-lockfile-registry-resolved=true$/m);
    const withUrl = Object.entries(lock.packages).filter(([, entry]) => 'resolved' in entry);
    expect(withUrl.map(([lockPath]) => lockPath)).toEqual([]);
  });

  it('leaves chDB out of a server install (`npm ci --omit=optional`)', () => {
    expect(manifest.optionalDependencies).toHaveProperty('chdb');
    expect(manifest.dependencies).not.toHaveProperty('chdb');
    expect(lock.packages['node_modules/chdb']!.optional).toBe(true);
  });
});
