import { defaultOf, type Reader, type Variable } from './variable.ts';

type Env = Record<string, string | undefined>;

/**
 * Reads every declared variable from `env` once and collects every problem, in the order of the
 * declarations, so an operator fixes them in one go. Reading an undeclared variable is a bug:
 * it would be missing from the documentation.
 */
export function readVariables(
  declared: readonly Variable<unknown>[],
  env: Env,
): { read: Reader; problems: string[] } {
  const raw = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const replacedBy = new Map(declared.flatMap((v) => (v.replaces ? [[v.replaces, v]] : [])));
  const values = new Map<Variable<unknown>, unknown>();
  const problems = new Map<Variable<unknown>, string[]>(declared.map((v) => [v, []]));
  const read: Reader = <T>(variable: Variable<T>): T => {
    const found = problems.get(variable as Variable<unknown>);
    if (found === undefined) throw new Error(`${variable.name} is read but not declared`);
    if (values.has(variable)) return values.get(variable) as T;
    const replacement = replacedBy.get(variable);
    const text =
      replacement && raw(replacement.name) !== undefined ? undefined : raw(variable.name);
    const value =
      text === undefined
        ? defaultOf(variable, read)
        : variable.parse(text, (problem) => found.push(problem), read);
    values.set(variable, value);
    return value;
  };
  for (const variable of declared) {
    const value = read(variable);
    const found = problems.get(variable) as string[];
    const problem = variable.check?.(value, read);
    if (problem !== undefined) found.push(problem);
    const [needed, why] = variable.needs ?? [];
    if (needed && value !== undefined && read(needed) === undefined) {
      found.push(`${variable.name} needs ${needed.name}: ${why}`);
    }
  }
  return { read, problems: declared.flatMap((v) => problems.get(v) ?? []) };
}
