/**
 * ClickHouse SQL as small typed values: composed clause by clause, rendered into text once.
 *
 * A value from a request can reach a statement only as a parameter (`param`), which holds a
 * placeholder's name and type and never the value: the text says `{name:Type}` and the values
 * travel beside it. Identifiers are checked in one place (`ident`). `raw` is the one door for
 * other text; it is for SQL written in code or in the catalog, never for anything a request says.
 */

/** The types a placeholder may declare: what the compiler binds, and nothing else. */
export type ClickHouseType =
  | 'String'
  | 'Array(String)'
  | 'UInt32'
  | 'UInt64'
  | "DateTime64(3, 'UTC')"
  | "Array(DateTime64(3, 'UTC'))";

const TYPES: ReadonlySet<string> = new Set<ClickHouseType>([
  'String',
  'Array(String)',
  'UInt32',
  'UInt64',
  "DateTime64(3, 'UTC')",
  "Array(DateTime64(3, 'UTC'))",
]);

export type SqlValue =
  | { readonly kind: 'raw'; readonly text: string }
  | { readonly kind: 'identifier'; readonly name: string }
  | { readonly kind: 'param'; readonly name: string; readonly type: ClickHouseType }
  | { readonly kind: 'list'; readonly items: readonly SqlValue[]; readonly separator: string };

/** What `render` gives: the text, and each placeholder it holds with its type. */
export interface RenderedSql {
  sql: string;
  parameters: Record<string, ClickHouseType>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Text written in code or in the catalog, as it stands. Dangerous with anything else. */
export const raw = (text: string): SqlValue => ({ kind: 'raw', text });

/** A column, table or alias name, e.g. `project`. Throws on anything but a plain name. */
export function ident(name: string): SqlValue {
  if (!NAME.test(name)) throw new TypeError(`not an SQL identifier: ${JSON.stringify(name)}`);
  return { kind: 'identifier', name };
}

/** A bound parameter: `{name:Type}`. The value is bound beside the text, by name. */
export function param(name: string, type: ClickHouseType): SqlValue {
  if (!NAME.test(name)) throw new TypeError(`not a parameter name: ${JSON.stringify(name)}`);
  if (!TYPES.has(type)) throw new TypeError(`not a parameter type: ${JSON.stringify(type)}`);
  return { kind: 'param', name, type };
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

/**
 * Text written in the catalog, e.g. `toDate(at, {tz:String})`, with each placeholder kept as a
 * parameter, so that `render` names every parameter a statement holds.
 */
export function catalogSql(text: string): SqlValue {
  const items: SqlValue[] = [];
  let at = 0;
  for (const found of text.matchAll(PLACEHOLDER)) {
    if (found.index > at) items.push(raw(text.slice(at, found.index)));
    items.push(param(found[1] as string, found[2] as ClickHouseType));
    at = found.index + found[0].length;
  }
  if (at < text.length) items.push(raw(text.slice(at)));
  return items.length === 1 ? (items[0] as SqlValue) : join(items, '');
}

/** Names, checked, with commas between them: `task_gid, dependency_gid`. */
export const idents = (names: readonly string[]): SqlValue => join(names.map(ident));

/** The items with `separator` between them: `a, b, c` by default. */
export const join = (items: readonly SqlValue[], separator = ', '): SqlValue => ({
  kind: 'list',
  items,
  separator,
});

const isSqlValue = (value: unknown): value is SqlValue =>
  typeof value === 'object' &&
  value !== null &&
  ['raw', 'identifier', 'param', 'list'].includes((value as SqlValue).kind);

/**
 * SQL written in code, with typed values in its holes: sql`${column} < ${param('to', T)}`.
 * A hole takes only an SqlValue (a string or number throws), so nothing is inlined by mistake.
 */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): SqlValue {
  const items: SqlValue[] = [];
  strings.forEach((text, i) => {
    if (text !== '') items.push(raw(text));
    if (i === values.length) return;
    const value: unknown = values[i];
    if (!isSqlValue(value)) {
      throw new TypeError(`an SQL hole takes an SqlValue, not ${JSON.stringify(value)}`);
    }
    items.push(value);
  });
  return join(items, '');
}

/** `a AND b`, leaving out the conditions that are null. */
export const and = (conditions: ReadonlyArray<SqlValue | null>): SqlValue =>
  join(
    conditions.filter((condition): condition is SqlValue => condition !== null),
    ' AND ',
  );

/** `a OR b`, leaving out the conditions that are null. */
export const or = (conditions: ReadonlyArray<SqlValue | null>): SqlValue =>
  join(
    conditions.filter((condition): condition is SqlValue => condition !== null),
    ' OR ',
  );

/** `expression AS name`. */
export const alias = (expression: SqlValue, name: string): SqlValue =>
  sql`${expression} AS ${ident(name)}`;

/**
 * The text of a value, with `{name:Type}` for each parameter, and the parameters it names.
 * Throws when one name is given two types: one name binds one value.
 */
export function render(value: SqlValue): RenderedSql {
  const parameters: Record<string, ClickHouseType> = {};
  const text = (node: SqlValue): string => {
    switch (node.kind) {
      case 'raw':
        return node.text;
      case 'identifier':
        return node.name;
      case 'param': {
        const known = parameters[node.name];
        if (known !== undefined && known !== node.type) {
          throw new TypeError(`parameter ${node.name} is both ${known} and ${node.type}`);
        }
        parameters[node.name] = node.type;
        return `{${node.name}:${node.type}}`;
      }
      case 'list':
        return node.items.map(text).join(node.separator);
    }
  };
  return { sql: text(value), parameters };
}

const WORD = /[A-Za-z0-9_]+/g;

/**
 * Every word a value's text holds (names, functions, literals' words): what a statement may
 * read, taken from its pieces, as `\bname\b` would find it in the rendered text.
 */
export function wordsIn(value: SqlValue, into = new Set<string>()): Set<string> {
  switch (value.kind) {
    case 'raw':
      for (const [word] of value.text.matchAll(WORD)) into.add(word);
      break;
    case 'identifier':
      into.add(value.name);
      break;
    case 'param':
      wordsIn(raw(`{${value.name}:${value.type}}`), into);
      break;
    case 'list':
      for (const item of value.items) wordsIn(item, into);
  }
  return into;
}
