import { isDeepStrictEqual } from 'node:util';
import { CompiledQuery } from 'kysely';

/** A statement whose text depends only on a few traits of its input: its shape. */
export interface ShapedStatement<Input, Row> {
  /** A key naming everything the text depends on (never a value it binds). */
  shape(input: Input): string;
  /** Kysely's statement for `input`, compiled. */
  compile(input: Input): CompiledQuery<Row>;
  /** `compile(input).parameters`, without building anything: in the order the text binds them. */
  values(input: Input): unknown[];
}

/** Plenty for the few shapes a hot statement runs in; beyond it, statements are compiled anew. */
const MAX_SHAPES = 256;

/**
 * Compiles a hot statement once per shape. Building and compiling a Kysely statement for every
 * request cost as much CPU as the rest of the request's work on it; the text depends only on
 * the shape, so later statements of a shape reuse the first one's text with their own values.
 * The first statement of each shape is compiled for real and its parameters compared with
 * `values`, so a text is never sent with values in another order: a mismatch throws at once.
 */
export function compiledShapes<Input, Row>(
  statement: ShapedStatement<Input, Row>,
): (input: Input) => CompiledQuery<Row> {
  const texts = new Map<string, string>();
  return (input) => {
    const shape = statement.shape(input);
    const text = texts.get(shape);
    if (text !== undefined) {
      return CompiledQuery.raw(text, statement.values(input)) as CompiledQuery<Row>;
    }
    const compiled = statement.compile(input);
    if (!isDeepStrictEqual(compiled.parameters, statement.values(input))) {
      throw new Error(`values() does not follow the compiled statement of shape ${shape}`);
    }
    if (texts.size < MAX_SHAPES) texts.set(shape, compiled.sql);
    return compiled;
  };
}
