import fs from 'node:fs';
import { Command } from 'commander';
import { COMMANDS } from './commands/index.ts';
import { heldDirectoryMessage } from './data-directory.ts';

const { version } = JSON.parse(
  fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

const program = new Command('cairn')
  .description('Operate a Cairn deployment: migrations, tokens, demo data, projections.')
  .version(version, '-V, --version', 'print the version of Cairn and exit')
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true });

for (const register of COMMANDS) register(program);

try {
  await program.parseAsync(process.argv);
  process.exit(0);
} catch (error) {
  const message =
    heldDirectoryMessage(error) ?? (error instanceof Error ? error.message : String(error));
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}
