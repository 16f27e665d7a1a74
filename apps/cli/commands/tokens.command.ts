import type { Command } from 'commander';
import type { TokenKind } from '../../../libs/auth/principal.ts';
import { createTokenBody, tokenIdParams } from '../../../libs/auth/token.schemas.ts';
import type { NewTokenInput } from '../../../libs/auth/token.service.ts';
import { loadConfig } from '../../../libs/config/config.ts';
import { ValidationError } from '../../../libs/http/errors.ts';
import { validate } from '../../../libs/http/validation.ts';
import { requireDataDir } from '../data-directory.ts';
import { type TokenBackend, withTokenBackend } from './token-backends.ts';

/**
 * Token management without the HTTP API or the master key: whoever can read the configuration
 * (DATABASE_URL, or DATA_DIR for the embedded engine) already holds the keys to the data. While
 * an embedded server holds DATA_DIR, the commands go through it (see token-backends.ts).
 */
async function withTokens<T>(work: (backend: TokenBackend) => Promise<T>): Promise<T> {
  const config = loadConfig();
  await requireDataDir(config, { postgres: true, clickhouse: false });
  return withTokenBackend(config, work);
}

/** Validation issues as `loc: msg`, one per line, under `heading`. */
function invalid(error: unknown, heading: string): never {
  if (!(error instanceof ValidationError)) throw error;
  const lines = error.issues.map((issue) => `${issue.loc.slice(1).join('.')}: ${issue.msg}`);
  throw new Error(`${heading}:\n  ${lines.join('\n  ')}`);
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerTokens(program: Command): void {
  const tokens = program.command('tokens').description('Issue, list and revoke API tokens.');

  tokens
    .command('create')
    .description('Issue a token; it is printed once and only its hash is kept.')
    .requiredOption('--name <name>', 'what the token is for')
    .requiredOption('--scopes <list>', 'comma-separated, e.g. analytics:read,workflows:read')
    .requiredOption('--business <name>', 'a business the token may use (repeatable)', collect, [])
    .option('--service-account', 'a service account (5000 requests/minute)')
    .option('--expires-in-days <n>', 'expire after this many days')
    .action(async (options) => {
      const input = {
        name: options.name,
        scopes: String(options.scopes)
          .split(',')
          .map((scope) => scope.trim())
          .filter(Boolean),
        businesses: options.business,
        kind: (options.serviceAccount ? 'service_account' : 'user') as TokenKind,
        ...(options.expiresInDays === undefined
          ? {}
          : { expires_in_days: Number(options.expiresInDays) }),
      };
      let request: NewTokenInput;
      try {
        request = validate<NewTokenInput>(createTokenBody, input, 'body');
      } catch (error) {
        invalid(error, 'invalid token request');
      }
      const { issued, empty } = await withTokens(async (tokens) => {
        const issued = await tokens.create(request);
        // Only a warning: failing to look must not hide a token that now exists.
        const empty = await tokens.businessesWithoutTasks(issued).catch(() => undefined);
        return { issued, empty };
      });
      // A business is only a name on a token: a typo gives a token that sees nothing.
      for (const business of empty ?? []) {
        process.stderr.write(
          `warning: business "${business}" has no tasks yet. Check the name; the token sees its data once tasks are created in it.\n`,
        );
      }
      process.stdout.write(
        `Created ${issued.id} (${issued.kind}; scopes ${issued.scopes.join(', ')}; businesses ${issued.businesses.join(', ')}; expires ${issued.expires_at ?? 'never'}).\n` +
          'Token (shown only now; keep it secret):\n' +
          `  ${issued.token}\n`,
      );
    });

  tokens
    .command('list')
    .description('List tokens (never their secrets).')
    .action(async () => {
      const rows = await withTokens((tokens) => tokens.list());
      for (const view of rows) {
        process.stdout.write(
          `${view.id}  ${view.state}  ${view.kind}  ${view.name}  scopes=${view.scopes.join(',')}  businesses=${view.businesses.join(',')}  expires=${view.expires_at ?? 'never'}\n`,
        );
      }
      if (rows.length === 0) process.stdout.write('No tokens.\n');
    });

  tokens
    .command('revoke')
    .description('Revoke a token at once.')
    .argument('<id>', 'the token id (tok_…), as printed by create or list')
    .action(async (id: string) => {
      try {
        validate(tokenIdParams, { id }, 'path');
      } catch (error) {
        invalid(
          error,
          `${id} is not a token id (tok_ and 16 hex digits, as create and list print)`,
        );
      }
      const revoked = await withTokens((tokens) => tokens.revoke(id));
      if (!revoked) throw new Error(`token ${id} does not exist or is already revoked`);
      process.stdout.write(`Revoked ${id}.\n`);
    });
}
