import type { Command } from 'commander';
import { registerBackup } from './backup.command.ts';
import { registerBusinesses } from './businesses.command.ts';
import { registerDemo } from './demo.command.ts';
import { registerMigrate } from './migrate.command.ts';
import { registerProjector } from './projector.command.ts';
import { registerTokens } from './tokens.command.ts';

/** Every CLI command registers itself on the program; add new ones here. */
export const COMMANDS: Array<(program: Command) => void> = [
  registerMigrate,
  registerTokens,
  registerDemo,
  registerProjector,
  registerBackup,
  registerBusinesses,
];
