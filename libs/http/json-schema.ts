/** A JSON Schema (2020-12) as plain data: what routes declare and Ajv compiles. */
export type JsonSchema = Record<string, unknown>;
