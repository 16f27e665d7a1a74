import { isKnownWeakSecret } from './known-weak-secrets.ts';

/** Secrets derive the cursor and idempotency keys: they must carry at least this much. */
export const MIN_SECRET_LENGTH = 32;

/**
 * Estimated strength a secret must reach, as if each character were drawn at random from the
 * classes it uses. 160 bits: 40 hex digits, 49 decimal digits, 35 lowercase letters; a mix of
 * classes reaches it within the 32 characters every secret needs.
 */
const MIN_ESTIMATED_BITS = 160;
const MIN_DISTINCT_CHARACTERS = 8;
/** Share of neighbouring characters one code point apart ("abcdef…", "0123…") that is a run. */
const MAX_SEQUENTIAL_SHARE = 0.75;
const PLACEHOLDER_WORDS = ['changeme', 'replaceme', 'placeholder', 'example'];

const HOW = 'set a long random secret, e.g. the output of `openssl rand -base64 48`';

/**
 * Why `value` is no secret, as a configuration problem naming `name`, or undefined when it will
 * do. Only obvious weakness is refused (public example values, short keys, tiny alphabets,
 * patterns): `openssl rand -base64 32` or `-hex 20` passes. The value itself is never repeated.
 */
export function secretProblem(name: string, value: string): string | undefined {
  if (value.length < MIN_SECRET_LENGTH) {
    return `${name} must be at least ${MIN_SECRET_LENGTH} characters`;
  }
  if (isKnownWeakSecret(value)) {
    return `${name} is an example value published in Cairn's own repository, known to anyone; ${HOW}`;
  }
  const weakness = weaknessOf(value);
  return weakness === undefined ? undefined : `${name} is too weak (${weakness}); ${HOW}`;
}

function weaknessOf(value: string): string | undefined {
  const characters = [...value];
  const distinct = new Set(characters).size;
  if (distinct === 1) return 'one character repeated';
  if (distinct < MIN_DISTINCT_CHARACTERS) return `only ${distinct} different characters`;
  if (isRepetition(characters)) return 'a shorter text repeated';
  if (sequentialShare(characters) >= MAX_SEQUENTIAL_SHARE) return 'a run of consecutive characters';
  const folded = value.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (PLACEHOLDER_WORDS.some((word) => folded.includes(word))) return 'a placeholder';
  const alphabet = alphabetOf(value);
  const needed = Math.ceil(MIN_ESTIMATED_BITS / Math.log2(alphabet.size));
  if (characters.length < needed) {
    return `${alphabet.name} only: at least ${needed} characters of them are needed`;
  }
  return undefined;
}

/** True when the text is a shorter text written out at least twice ("abc1abc1abc1…"). */
function isRepetition(characters: string[]): boolean {
  const n = characters.length;
  for (let period = 1; period <= n / 2; period++) {
    let repeats = true;
    for (let i = period; i < n && repeats; i++) repeats = characters[i] === characters[i - period];
    if (repeats) return true;
  }
  return false;
}

function sequentialShare(characters: string[]): number {
  let steps = 0;
  let previous: number | undefined;
  for (const character of characters) {
    const code = character.codePointAt(0) ?? 0;
    if (previous !== undefined && Math.abs(code - previous) === 1) steps++;
    previous = code;
  }
  return steps / (characters.length - 1);
}

/** The character classes a secret draws on, as one alphabet: its size and how to name it. */
function alphabetOf(value: string): { size: number; name: string } {
  if (/^[0-9]+$/.test(value)) return { size: 10, name: 'decimal digits' };
  if (/^[0-9a-f]+$/.test(value) || /^[0-9A-F]+$/.test(value)) {
    return { size: 16, name: 'hexadecimal digits' };
  }
  const classes: [RegExp, number, string][] = [
    [/[a-z]/, 26, 'lowercase letters'],
    [/[A-Z]/, 26, 'uppercase letters'],
    [/[0-9]/, 10, 'digits'],
    [/[^a-zA-Z0-9]/, 33, 'symbols'],
  ];
  const used = classes.filter(([pattern]) => pattern.test(value));
  return {
    size: used.reduce((sum, [, size]) => sum + size, 0),
    name: used.map(([, , name]) => name).join(' and '),
  };
}
