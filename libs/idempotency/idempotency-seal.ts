import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const PREFIX = 'sealed:v1:';

/**
 * Responses to the master key carry freshly issued tokens, which must never rest in the
 * database in clear. They are sealed (AES-256-GCM) with a key derived from the master key,
 * which lives outside the database, so a leaked table reveals nothing usable.
 */
export function sealKey(masterKey: string): Buffer {
  return createHash('sha256').update(`cairn idempotency seal\0${masterKey}`).digest();
}

export function seal(text: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return `${PREFIX}${[iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64')).join(':')}`;
}

/** Returns undefined when the text cannot be opened with this key (e.g. a rotated master key). */
export function unseal(text: string, key: Buffer | undefined): string | undefined {
  if (!text.startsWith(PREFIX)) return text;
  if (!key) return undefined;
  const [iv, tag, sealed] = text
    .slice(PREFIX.length)
    .split(':')
    .map((part) => Buffer.from(part, 'base64'));
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv as Buffer);
    decipher.setAuthTag(tag as Buffer);
    return Buffer.concat([decipher.update(sealed as Buffer), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
