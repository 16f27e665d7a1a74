import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Recognisable in logs and secret scanners; the rest is 256 random bits. */
export const TOKEN_PREFIX = 'cairn_';

export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function generateTokenId(): string {
  return `tok_${randomBytes(8).toString('hex')}`;
}

export function generateMasterKey(): string {
  return `cairn_master_${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/**
 * Compares two `hashSecret` digests, so the time taken says nothing about how much of the
 * secret matched.
 */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
