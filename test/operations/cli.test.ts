import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../apps/cli/commands/index.ts';
import { useCairn } from '../support/cairn.ts';
import { migratedPglite } from '../support/engines.ts';

const run = promisify(execFile);
const cli = (...args: string[]) => cliWith({}, ...args);
const cliWith = (env: Record<string, string>, ...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'apps/cli/main.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
  });

/** The program as apps/cli/main.ts builds it, without running it. */
function program(): Command {
  const root = new Command('cairn');
  for (const register of COMMANDS) register(root);
  return root;
}

function walk(command: Command, prefix: string[] = []): Array<[string[], Command]> {
  return command.commands.flatMap((sub) => {
    const name = [...prefix, sub.name()];
    return [[name, sub] as [string[], Command], ...walk(sub, name)];
  });
}

describe('cairn CLI', () => {
  it('documents every command and every option', () => {
    const commands = walk(program());
    expect(commands.length).toBeGreaterThan(0);
    for (const [name, command] of commands) {
      expect(command.description(), name.join(' ')).not.toBe('');
      for (const option of command.options) {
        expect(option.description, `${name.join(' ')} ${option.flags}`).not.toBe('');
      }
      for (const argument of command.registeredArguments) {
        expect(argument.description, `${name.join(' ')} <${argument.name()}>`).not.toBe('');
      }
    }
  });

  it('has the operating commands: migrate, tokens, demo, projector rebuild', () => {
    const names = walk(program()).map(([name]) => name.join(' '));
    expect(names).toEqual(
      expect.arrayContaining([
        'migrate',
        'tokens create',
        'tokens list',
        'tokens revoke',
        'demo',
        'projector rebuild',
      ]),
    );
    const demo = walk(program()).find(([name]) => name.join(' ') === 'demo')![1];
    expect(demo.options.map((option) => option.long)).toContain('--facts');
  });

  it('--help works at every level', async () => {
    for (const [name, command] of walk(program())) {
      expect(command.helpInformation(), name.join(' ')).toContain(`Usage: cairn ${name.join(' ')}`);
    }
    // And through the real entry point, once at the top and once two levels down.
    expect((await cli('--help')).stdout).toMatch(/^Usage: cairn/m);
    expect((await cli('tokens', 'create', '--help')).stdout).toContain(
      'Usage: cairn tokens create',
    );
  }, 60_000);

  it('demo shows its progress on stderr when piped, and its summary alone on stdout', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-cli-demo-'));
    await migratedPglite(path.join(dataDir, 'pg'));
    try {
      const { stdout, stderr } = await cliWith(
        { DATA_DIR: dataDir, DATABASE_URL: '', CLICKHOUSE_URL: '' },
        'demo',
        '--facts',
        '5000',
        '--businesses',
        '3',
      );
      expect(stdout).toBe('Loaded 5000 facts into ClickHouse (chdb) for businesses biz-0…biz-2.\n');
      // A pipe is no terminal: the bar still reports, as plain lines, ending at the total.
      expect(stderr).toMatch(/facts \[[^\]]*\] 100% \| 5000\/5000 facts/);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('cairn CLI: version and data directory', () => {
  /** A DATA_DIR that does not exist, in a fresh temporary folder. */
  const missingDir = async () =>
    path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-cli-dir-')), 'data');
  const embedded = (dataDir: string) => ({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    CLICKHOUSE_URL: '',
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(await fs.readFile('package.json', 'utf8')) as {
      version: string;
    };
    expect((await cli('--version')).stdout).toBe(`${version}\n`);
    expect((await cli('-V')).stdout).toBe(`${version}\n`);
  }, 120_000);

  it('refuses a data directory that does not exist, names the fix and creates nothing', async () => {
    const dataDir = await missingDir();
    for (const args of [
      ['tokens', 'list'],
      ['tokens', 'create', '--name', 'x', '--scopes', 'workflows:read', '--business', 'acme'],
      ['tokens', 'revoke', 'tok_0123456789abcdef'],
      ['projector', 'backfill-rollups'],
      ['projector', 'rebuild'],
    ]) {
      const failure = await cliWith(embedded(dataDir), ...args).then(
        () => undefined,
        (error: { code: number; stderr: string; stdout: string }) => error,
      );
      expect(failure, args.join(' ')).toMatchObject({ code: 1, stdout: '' });
      expect(failure!.stderr, args.join(' ')).toContain(`No data directory at ${dataDir}`);
      expect(failure!.stderr).toContain('npm run cli -- migrate');
    }
    await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    await fs.rm(path.dirname(dataDir), { recursive: true, force: true });
  }, 240_000);

  it('migrate creates the data directory, and says so', async () => {
    const dataDir = await missingDir();
    try {
      const { stdout, stderr } = await cliWith(embedded(dataDir), 'migrate');
      expect(stdout).toContain('Postgres (pglite) and ClickHouse (chdb) are up to date.');
      expect(stderr).toContain(`Created the data directory ${dataDir}.`);
      expect((await fs.readdir(dataDir)).sort()).toEqual(expect.arrayContaining(['ch', 'pg']));
      // A second run finds it: nothing to announce.
      expect((await cliWith(embedded(dataDir), 'migrate')).stderr).not.toContain('Created');
    } finally {
      await fs.rm(path.dirname(dataDir), { recursive: true, force: true });
    }
  }, 240_000);
});

describe('cairn CLI beside the server holding DATA_DIR', () => {
  // Embedded ClickHouse in either engine set: chDB admits one process per directory.
  const cairn = useCairn({ issueToken: false });

  it("demo and migrate say who holds the directory and how to go on, not chDB's lock error", async () => {
    const env = {
      DATA_DIR: cairn.config.dataDir,
      DATABASE_URL: cairn.config.databaseUrl ?? '',
      CLICKHOUSE_URL: '',
    };
    // A server holding either embedded engine says where it is (the CLI's erasure goes through it).
    const holder = `The Cairn server at ${cairn.url} (pid ${process.pid})`;
    for (const [args, meanwhile] of [
      [['demo', '--facts', '100'], 'POST /api/v1/tasks'],
      [['migrate'], 'applies migrations itself at start-up'],
    ] as const) {
      const failure = await cliWith(env, ...args).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure, args[0]).toMatchObject({ code: 1 });
      expect(failure!.stderr).toContain(
        `${holder} holds the data directory ${cairn.config.dataDir}`,
      );
      expect(failure!.stderr).toContain(`Stop it (Ctrl-C where it runs, or kill ${process.pid})`);
      expect(failure!.stderr).toContain(meanwhile);
      expect(failure!.stderr).not.toMatch(/Cannot lock file|ChdbConnectionError/);
    }
    // The server was left alone and still answers.
    expect((await fetch(`${cairn.url}/healthz`)).status).toBe(200);
  }, 240_000);
});
