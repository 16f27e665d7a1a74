/**
 * Secrets that appear, or once appeared, as example values in Cairn's own repository (README.md,
 * docs/, docker-compose.yml, examples/). Anyone can read them, so a deployment that kept one has
 * no secret at all: config.ts refuses them for every secret variable. test/auth/secrets.test.ts reads
 * those files and fails while a key-like value found there is missing from this list.
 */
export const KNOWN_WEAK_SECRETS: readonly string[] = Object.freeze([
  // docker-compose.yml's default CAIRN_MASTER_KEY until compose was made to require one.
  'change-me-to-a-long-random-secret',
]);

/** Compared without case or surrounding space: `Change-Me-…` is the same public value. */
export function isKnownWeakSecret(value: string): boolean {
  const folded = value.trim().toLowerCase();
  return KNOWN_WEAK_SECRETS.some((known) => known.toLowerCase() === folded);
}
