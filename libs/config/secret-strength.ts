import { createRequire } from 'node:module';
import type { MatchExtended, ZxcvbnFactory } from '@zxcvbn-ts/core';
import { isKnownWeakSecret } from './known-weak-secrets.ts';

/** Secrets derive the cursor and idempotency keys: they must carry at least this much. */
export const MIN_SECRET_LENGTH = 32;

/**
 * Guesses a secret must cost an attacker, as zxcvbn estimates them: 10^30, about 100 bits. It
 * counts ten values for each character it cannot explain, fewer than a random key's alphabet
 * holds, so `openssl rand -hex 20` (160 bits) estimates at 10^35 or more and `-base64 32` at
 * 10^42 (docs/benchmarks.md#secret-check); words, patterns and repeats stay far below.
 */
const MIN_GUESSES_LOG10 = 30;

/**
 * Characters the estimate reads. zxcvbn's matchers cost more than linearly in the length (a
 * 64-character hex key took 0.4 s with its default l33t limit); a key whose first 64
 * characters pass carries well over the guesses needed, whatever follows.
 */
const ESTIMATED_LENGTH = 64;

/** Words a Cairn secret would be built from, counted as known to an attacker. */
const OWN_WORDS = ['cairn', 'master', 'key', 'secret', 'cursor', 'token', 'previous', 'rotation'];

const HOW = 'set a long random secret, e.g. the output of `openssl rand -base64 48`';

/** How a guessable part of a secret is named, by the zxcvbn pattern that found it. */
const PATTERNS: Record<string, string> = {
  dictionary: 'words or passwords in common use',
  repeat: 'repeated text',
  sequence: 'runs like "abc" or "123"',
  spatial: 'keyboard patterns',
  date: 'dates',
  regex: 'recent years',
};

/**
 * Why `value`, read from `source` (a variable name or a file path), is no secret, or undefined
 * when it will do. One check for every place a secret comes from; the message names the place,
 * never the value (start-up errors end up in logs).
 */
export function secretProblem(source: string, value: string): string | undefined {
  // A key is sent as `Authorization: Bearer <key>`, read up to the first whitespace.
  if (/\s/.test(value)) {
    return `${source} holds whitespace, so it could never be sent in an Authorization header; ${HOW}`;
  }
  if (/[^\x21-\x7e]/.test(value)) {
    return `${source} holds characters outside printable ASCII, which an Authorization header cannot carry; ${HOW}`;
  }
  if (value.length < MIN_SECRET_LENGTH) {
    return `${source} must be at least ${MIN_SECRET_LENGTH} characters`;
  }
  if (isKnownWeakSecret(value)) {
    return `${source} is an example value published in Cairn's own repository, known to anyone; ${HOW}`;
  }
  const estimate = estimator().check(value.slice(0, ESTIMATED_LENGTH), OWN_WORDS);
  if (estimate.guessesLog10 >= MIN_GUESSES_LOG10) return undefined;
  const found = [...new Set(estimate.sequence.map(patternName))].filter(Boolean);
  const made = found.length > 0 ? `it is made of ${found.join(' and ')}, so ` : '';
  return `${source} is too weak: ${made}about 10^${Math.floor(estimate.guessesLog10)} guesses would find it, where a secret needs 10^${MIN_GUESSES_LOG10}; ${HOW}`;
}

function patternName(match: MatchExtended): string | undefined {
  if (match.pattern === 'dictionary' && match.dictionaryName === 'userInputs') {
    return `words a Cairn secret would be named by (${OWN_WORDS.slice(0, 4).join(', ')}, …)`;
  }
  return PATTERNS[match.pattern];
}

let built: ZxcvbnFactory | undefined;

/**
 * The estimator with the common-password, English and keyboard-layout dictionaries. Loaded on
 * the first check, so a process given no secret to check never reads the dictionaries.
 */
function estimator(): ZxcvbnFactory {
  if (built) return built;
  const require = createRequire(import.meta.url);
  const { ZxcvbnFactory } = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
  const common =
    require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
  const en = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
  built = new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    // Its default (100) made one check of a random hex key take 0.4 s; 4 finds the same words.
    l33tMaxSubstitutions: 4,
  });
  return built;
}
