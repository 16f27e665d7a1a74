import type { JsonSchema } from './json-schema.ts';

/** The only spelling of an integer a query or path parameter may use. */
export const INTEGER_TEXT = /^-?[0-9]+$/;
/** Decimals likewise: no exponents, hex, signs other than a leading minus, or spaces. */
export const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Query and path values arrive as text. A text becomes a number only when it is spelled as one
 * plainly; anything else (`0x5`, `1e1`, `+3`, ` 1`, `Infinity`) stays text, so the schema's type
 * check refuses it with `int_parsing` at its own location instead of reading it generously.
 * Bounds are then the schema's (`minimum`, `maximum`), checked on the exact value.
 */
export function parseParams(
  schema: JsonSchema,
  raw: Record<string, unknown>,
): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const parsed: Record<string, unknown> = { ...raw };
  for (const [name, value] of Object.entries(raw)) {
    const property = properties[name];
    if (property === undefined || typeof value !== 'string') continue;
    const types = ([] as unknown[]).concat(property.type);
    if (types.includes('integer') && INTEGER_TEXT.test(value)) {
      const number = Number(value);
      // Beyond 2^53 the text no longer names one integer; let the schema's bounds refuse it.
      parsed[name] = Number.isSafeInteger(number)
        ? number
        : number > 0
          ? Number.MAX_VALUE
          : -Number.MAX_VALUE;
    } else if (types.includes('number') && NUMBER_TEXT.test(value)) {
      parsed[name] = Number(value);
    }
  }
  return parsed;
}
