/**
 * Which route template a path belongs to when several match it. As in OpenAPI, a literal
 * segment wins over a parameter in the same place: `/api/v1/tokens/self` is its own resource,
 * not a token id for `/api/v1/tokens/:id`. Express tries routes in order and would let the
 * parameter catch it under any method the literal path does not take.
 */

const segments = (template: string) => template.split('/');
const isParameter = (segment: string) => segment.startsWith(':');

/** How many of a template's segments are fixed text; more is more specific. */
export function literalSegments(template: string): number {
  return segments(template).filter((segment) => segment !== '' && !isParameter(segment)).length;
}

/**
 * The templates among `others` that take some of `template`'s paths for themselves: same
 * length, every fixed segment of `template` fixed alike in them, and more fixed segments.
 */
export function shadowingTemplates(template: string, others: readonly string[]): string[] {
  const own = segments(template);
  return [...new Set(others)].filter((other) => {
    const theirs = segments(other);
    return (
      other !== template &&
      theirs.length === own.length &&
      literalSegments(other) > literalSegments(template) &&
      own.every((segment, at) => isParameter(segment) || segment === theirs[at])
    );
  });
}

/** The most specific of the templates that match one path (several only when equally so). */
export function mostSpecific<T extends { path: string }>(matching: readonly T[]): T[] {
  const best = Math.max(...matching.map((route) => literalSegments(route.path)));
  return matching.filter((route) => literalSegments(route.path) === best);
}

/** The order `Allow` lists methods in; HEAD is allowed wherever GET is (Express answers it). */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** An `Allow` header value for the methods routes declare on one path. */
export function allowHeader(methods: readonly string[]): string[] {
  const upper = new Set(methods.map((method) => method.toUpperCase()));
  if (upper.has('GET')) upper.add('HEAD');
  return [...upper].sort(
    (a, b) =>
      (ALLOW_ORDER.indexOf(a) + 1 || ALLOW_ORDER.length + 1) -
      (ALLOW_ORDER.indexOf(b) + 1 || ALLOW_ORDER.length + 1),
  );
}
