import { randomBytes } from 'node:crypto';
import type { Cairn } from '../../apps/server/cairn.ts';
import type { Scope, TokenKind } from '../../libs/auth/principal.ts';
import { issueToken } from '../../libs/auth/token.service.ts';

export const ALL_SCOPES: Scope[] = [
  'workflows:read',
  'workflows:write',
  'workflows:execute',
  'analytics:read',
  'analytics:write',
];

export interface TokenSpec {
  scopes?: Scope[];
  businesses: string[];
  kind?: TokenKind;
  expires_in_days?: number;
}

/** Issues a real token in the app's database and returns the header that carries it. */
export async function authHeader(
  cairn: Cairn,
  spec: TokenSpec,
): Promise<{ Authorization: string }> {
  const issued = await issueToken(
    cairn.engines.postgres.db,
    { name: 'test', scopes: spec.scopes ?? ALL_SCOPES, ...spec },
    new Date(),
  );
  return { Authorization: `Bearer ${issued.token}` };
}

/** A secret as a generator makes one (256 bits), for a test's CAIRN_MASTER_KEY and the like. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function masterHeader(cairn: Cairn): { Authorization: string } {
  return { Authorization: `Bearer ${cairn.masterKey.value}` };
}
