/** Reads another variable's value, so a default or a check can depend on it. */
export type Reader = <T>(variable: Variable<T>) => T;

/**
 * One environment variable: everything loadConfig, the Config type and docs/configuration.md
 * know about it. Made by the kinds in variable-kinds.ts, never by hand.
 */
export interface Variable<T> {
  readonly name: string;
  /** The Default column of docs/configuration.md. */
  readonly shown: string;
  /** The Meaning column of docs/configuration.md. */
  readonly doc: string;
  /** The value when unset; a literal unless it follows another variable. */
  readonly default: T | Derived<T>;
  /** The value of a set variable (trimmed, never empty); `refuse` records each problem with it. */
  readonly parse: (raw: string, refuse: (problem: string) => void, read: Reader) => T;
  /** A problem with the value in the light of the others (a variable it needs). */
  check?(value: T, read: Reader): string | undefined;
  /** A variable this one is meaningless without, and why: refused when set without it. */
  readonly needs?: readonly [variable: Variable<unknown>, why: string];
  /** A broader variable this one replaces when set, which is then not read at all. */
  readonly replaces?: Variable<unknown>;
}

/** A section of docs/configuration.md: its heading and its table's rows, in order. */
export interface Area {
  readonly title: string;
  readonly variables: readonly Variable<unknown>[];
}

/** A default computed from other variables, with the words the documentation gives it. */
export interface Derived<T> {
  readonly derive: (read: Reader) => T;
}

export function defaultOf<T>(variable: Pick<Variable<T>, 'default'>, read: Reader): T {
  const value = variable.default;
  return isDerived(value) ? value.derive(read) : value;
}

/** The literal default, for callers that use a setting without a Config (tests, scripts). */
export function literalDefault<T>(variable: Variable<T>): T {
  if (isDerived(variable.default)) throw new Error(`${variable.name} has no literal default`);
  return variable.default;
}

function isDerived<T>(value: T | Derived<T>): value is Derived<T> {
  return typeof value === 'object' && value !== null && 'derive' in value;
}
