// Regenerates package-lock.json so that `npm ci` accepts it on every platform.
//
// npm records an optional dependency in the lockfile only when it can read its manifest, and a
// registry mirror that carries this platform's binaries alone (say, linux-x64) answers 404 for the
// others: the lockfile then lacks @biomejs/cli-darwin-arm64 and its kin, and `npm ci` on any
// machine refuses it ("Missing: … from lock file"). This script resolves the tree from scratch,
// then adds every optional dependency still missing, with its version and the os/cpu/libc its
// name states, so npm here skips it and npm elsewhere fetches it. Then npm reads the file once
// more and writes it in its own form (entries in its order, members in its order): otherwise the
// first `npm install` on a fresh clone rewrites those added entries and leaves a dirty tree.
//
//   npm run lockfile            resolve from scratch (newest versions package.json allows)
//   npm run lockfile -- --keep  keep the resolved versions, only add what is missing
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const LOCKFILE = 'package-lock.json';
const keep = process.argv.includes('--keep');

const npmLockOnly = () =>
  execFileSync(
    'npm',
    ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );

if (!keep) fs.rmSync(LOCKFILE, { force: true });
npmLockOnly();

const lock = JSON.parse(fs.readFileSync(LOCKFILE, 'utf8'));
const added = addMissingOptionals(lock.packages);
fs.writeFileSync(LOCKFILE, `${JSON.stringify(lock, null, 2)}\n`);
// npm keeps what it cannot fetch and only puts it where it would have written it.
npmLockOnly();
const written = JSON.parse(fs.readFileSync(LOCKFILE, 'utf8'));
const dropped = added.filter((lockPath) => !written.packages[lockPath]);
if (dropped.length) throw new Error(`npm dropped ${dropped.join(', ')} from ${LOCKFILE}`);
console.log(
  `${LOCKFILE}: ${Object.keys(lock.packages).length - 1} packages, ${added.length} added for other platforms${added.length ? `:\n  ${added.join('\n  ')}` : ''}`,
);

/** Adds each unresolved optional dependency where npm would place it; returns their lock paths. */
function addMissingOptionals(packages) {
  const added = [];
  for (const [parentPath, parent] of Object.entries(packages)) {
    for (const [name, version] of Object.entries(parent.optionalDependencies ?? {})) {
      if (resolve(packages, parentPath, name)) continue;
      const platform = platformOf(name);
      if (!platform) {
        throw new Error(
          `${name} (optional for ${parentPath || 'the project'}) is missing from the lockfile and its name names no platform`,
        );
      }
      const hoisted = `node_modules/${name}`;
      const lockPath = packages[hoisted] ? `${parentPath}/node_modules/${name}` : hoisted;
      packages[lockPath] = {
        version,
        ...platform,
        ...(parent.dev ? { dev: true } : {}),
        ...(parent.devOptional ? { devOptional: true } : {}),
        optional: true,
      };
      added.push(lockPath);
    }
  }
  return added;
}

/** Node's resolution: the parent's own node_modules, then each enclosing one up to the root. */
function resolve(packages, parentPath, name) {
  let dir = parentPath;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return packages[candidate];
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

/** Reads os, cpu and libc from a platform package's name, e.g. @chdb/lib-linux-arm64-gnu. */
function platformOf(name) {
  const words = name.split(/[/-]/);
  const os = words.find((word) =>
    ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'sunos', 'aix'].includes(word),
  );
  const cpu = words.find((word) =>
    ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64'].includes(word),
  );
  if (!os || !cpu) return undefined;
  const libc = words.includes('musl') ? 'musl' : words.includes('gnu') ? 'glibc' : undefined;
  return { cpu: [cpu], ...(libc ? { libc: [libc] } : {}), os: [os] };
}
