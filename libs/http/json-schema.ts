/** A JSON Schema (2020-12) as plain data: what routes declare and Ajv compiles. */
export type JsonSchema = Record<string, unknown>;

/**
 * The keyword under which a schema states constraints the service enforces in code, with
 * messages of its own (a parser after the schema check, a header read by its operation): Ajv
 * treats it as an annotation, and the published document merges its members in as standard
 * keywords (see openapi.ts), so the contract says what the code refuses.
 */
export const ENFORCED_IN_CODE = 'x-enforced-in-code';
/**
 * Members of a body whose text the handler checks itself, each item on its own (a batch's
 * queries): the body's walk for NUL and lone surrogates leaves them out.
 */
export const TEXT_CHECKED_PER_ITEM = 'x-text-checked-per-item';

/** `{...schema, ...enforcedInCode({pattern})}`: `pattern` is published, checked elsewhere. */
export const enforcedInCode = (constraints: JsonSchema): JsonSchema => ({
  [ENFORCED_IN_CODE]: constraints,
});
