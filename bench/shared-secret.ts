import { randomBytes } from 'node:crypto';

/**
 * A random secret the bench and the server child it spawns agree on: made once in the parent
 * and handed down in the environment, which the child inherits (each process drawing its own
 * would seal cursors the other cannot open).
 */
export function sharedSecret(variable: string): string {
  process.env[variable] ??= randomBytes(32).toString('base64url');
  return process.env[variable];
}
