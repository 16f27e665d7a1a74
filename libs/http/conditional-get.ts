/**
 * Whether a GET answered with entity tag `etag` is "not modified" for the caller's
 * `If-None-Match` (RFC 9110 §13.1.2): `*`, or a listed tag equal to it by weak comparison.
 * Express's own check gives up when the request says `Cache-Control: no-cache`, which fetch()
 * adds to every conditional request; a caller revalidating is exactly who should get the 304.
 */
export function notModified(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (ifNoneMatch === undefined || etag === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
}
