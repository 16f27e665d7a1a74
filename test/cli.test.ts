import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../apps/cli/commands/index.ts';

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
