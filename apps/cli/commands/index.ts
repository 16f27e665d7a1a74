import type { Command } from 'commander';
import { registerMigrate } from './migrate.command.ts';

/** Every CLI command registers itself on the program; add new ones here. */
export const COMMANDS: Array<(program: Command) => void> = [registerMigrate];
