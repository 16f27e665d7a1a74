import { Command } from 'commander';
import { COMMANDS } from './commands/index.ts';

const program = new Command('cairn')
  .description('Operate a Cairn deployment: migrations, tokens, demo data, projections.')
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true });

for (const register of COMMANDS) register(program);

try {
  await program.parseAsync(process.argv);
  process.exit(0);
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
