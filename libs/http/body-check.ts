import { ValidationError, type ValidationIssue } from './errors.ts';
import type { JsonSchema } from './json-schema.ts';
import { validate } from './validation.ts';

/** A request body as read: its bytes (`undefined` when the request had none) and charset. */
export interface RawBody {
  bytes: Uint8Array | undefined;
  charset: string;
}

/**
 * What reading a JSON body came to: the checked value (defaults filled in), the 422 issues, or
 * bytes that are not JSON at all. Plain data, so it can cross from a worker thread unchanged.
 */
export type BodyOutcome =
  | { kind: 'valid'; value: unknown }
  | { kind: 'invalid'; issues: ValidationIssue[] }
  | { kind: 'malformed' };

/**
 * Decodes and parses a body and, when the route declares a body schema, validates it. An empty
 * body reads as `{}`, as body-parser has always read it; a byte-order mark is dropped. Any JSON
 * value is accepted by the parser; one that is not an object is the schema's 422.
 */
export function checkBody(
  { bytes, charset }: RawBody,
  schema: JsonSchema | undefined,
): BodyOutcome {
  let value: unknown;
  if (bytes !== undefined) {
    try {
      const text = new TextDecoder(charset).decode(bytes);
      value = text.length === 0 ? {} : JSON.parse(text);
    } catch {
      return { kind: 'malformed' };
    }
  }
  if (schema === undefined) return { kind: 'valid', value: undefined };
  try {
    return { kind: 'valid', value: validate(schema, value, 'body') };
  } catch (error) {
    if (error instanceof ValidationError) return { kind: 'invalid', issues: error.issues };
    throw error;
  }
}
