import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
  return createHash('sha256').update(secret).digest('hex');
}

/** Compares digests, so the time taken says nothing about how much of the secret matched. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(
    createHash('sha256').update(a).digest(),
    createHash('sha256').update(b).digest(),
  );
}
