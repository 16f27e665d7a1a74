import path from 'node:path';
import { secretProblem } from './secret-strength.ts';
import { type Derived, defaultOf, type Reader, type Variable } from './variable.ts';

/** What every declaration says: its name, its Meaning, and its Default where not a literal. */
interface Declared<T> {
  readonly name: string;
  readonly doc: string;
  readonly shown?: string;
  check?(value: T, read: Reader): string | undefined;
  readonly needs?: readonly [variable: Variable<unknown>, why: string];
  readonly replaces?: Variable<unknown>;
}

const code = (value: unknown) => `\`${value}\``;

function shownDefault<T>(declared: Declared<T>, value: T | Derived<T> | undefined): string {
  if (declared.shown !== undefined) return declared.shown;
  if (value === undefined) return 'unset';
  if (typeof value === 'object') throw new Error(`${declared.name} needs words for its default`);
  return code(value);
}

/** A whole number within bounds; a bad one is refused and the default stands meanwhile. */
export function integer(
  declared: Declared<number> & {
    readonly default: number | Derived<number>;
    readonly min: number;
    readonly max: number;
  },
): Variable<number> {
  const { name, min, max } = declared;
  return {
    ...declared,
    shown: shownDefault(declared, declared.default),
    parse(raw, refuse, read) {
      if (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max) return Number(raw);
      refuse(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return defaultOf(declared, read);
    },
  };
}

/** A number from 0 to 1, as the OpenTelemetry ratio samplers take it. */
export function fraction(
  declared: Declared<number> & { readonly default: number },
): Variable<number> {
  return {
    ...declared,
    shown: shownDefault(declared, declared.default),
    parse(raw, refuse) {
      const value = Number(raw);
      if (!(value >= 0 && value <= 1)) {
        refuse(`${declared.name} must be a number from 0 to 1 (got "${raw}")`);
      }
      return value;
    },
  };
}

/** A switch spelled `yes` or `no` (`on`/`off`, or `true`/`false` where a contract says so). */
export function flag(
  declared: Declared<boolean> & {
    readonly default: boolean;
    readonly spelled: readonly [yes: string, no: string];
  },
): Variable<boolean> {
  const [yes, no] = declared.spelled;
  return {
    ...declared,
    shown: declared.shown ?? code(declared.default ? yes : no),
    parse(raw, refuse) {
      if (raw === yes || raw === no) return raw === yes;
      refuse(`${declared.name} must be ${yes} or ${no} (got "${raw}")`);
      return declared.default;
    },
  };
}

interface Choices<T extends string> {
  readonly values: readonly T[];
  /** Listed as `one of a, b, c` rather than `a, b or c`. */
  readonly oneOf?: boolean;
}

/**
 * One word from a closed list. A refused word is kept as the value, so the checks that read it
 * (a role's needs) still speak of what was given.
 */
export function choice<const T extends string>(
  declared: Declared<T> & Choices<T> & { readonly default: T },
): Variable<T>;
export function choice<const T extends string>(
  declared: Declared<T | undefined> & Choices<T>,
): Variable<T | undefined>;
export function choice<const T extends string>(
  declared: Declared<T> & Choices<T> & { readonly default?: T },
): Variable<T | undefined> {
  const { name, values } = declared;
  const listed = declared.oneOf
    ? `one of ${values.join(', ')}`
    : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
  return {
    ...(declared as Declared<T | undefined>),
    default: declared.default,
    shown: shownDefault(declared, declared.default),
    parse(raw, refuse) {
      if (!values.includes(raw as T)) refuse(`${name} must be ${listed} (got "${raw}")`);
      return raw as T;
    },
  };
}

/** Free text, or text of a pattern (`what` names it in the refusal). */
export function text(declared: Declared<string> & { readonly default: string }): Variable<string>;
export function text(
  declared: Declared<string | undefined> & { readonly pattern: RegExp; readonly what: string },
): Variable<string | undefined>;
export function text(
  declared: Declared<string | undefined> & {
    readonly default?: string;
    readonly pattern?: RegExp;
    readonly what?: string;
  },
): Variable<string | undefined> {
  const { name, pattern, what } = declared;
  return {
    ...declared,
    default: declared.default,
    shown: shownDefault(declared, declared.default),
    parse(raw, refuse) {
      if (pattern && !pattern.test(raw)) refuse(`${name} must be ${what} (got "${raw}")`);
      return raw;
    },
  };
}

/** A directory, made absolute against the working directory. */
export function directory(
  declared: Declared<string> & { readonly default: string | Derived<string> },
): Variable<string> {
  const fallback = declared.default;
  return {
    ...declared,
    shown: shownDefault(declared, fallback),
    // Resolved at each load, against the working directory of that moment.
    default: {
      derive: (read) =>
        path.resolve(typeof fallback === 'string' ? fallback : fallback.derive(read)),
    },
    parse: (raw) => path.resolve(raw),
  };
}

/** A URL of one of `protocols` (`postgres:`), kept as written. */
export function url(
  declared: Declared<string | undefined> & { readonly protocols: readonly string[] },
): Variable<string | undefined> {
  const { name, protocols } = declared;
  return {
    ...declared,
    default: undefined,
    shown: shownDefault(declared, undefined),
    parse(raw, refuse) {
      try {
        if (!protocols.includes(new URL(raw).protocol)) {
          refuse(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
        }
      } catch {
        refuse(`${name} is not a valid URL`);
      }
      return raw;
    },
  };
}

/** A secret, refused by name and never echoed: a secret does not belong in a start-up log. */
export function secret(declared: Declared<string | undefined>): Variable<string | undefined> {
  return {
    ...declared,
    default: undefined,
    shown: shownDefault(declared, undefined),
    parse(raw, refuse) {
      const problem = secretProblem(declared.name, raw);
      if (problem !== undefined) refuse(problem);
      return raw;
    },
  };
}
