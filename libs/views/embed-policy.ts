/**
 * The chart page's Content-Security-Policy: its scripts, styles and calls from this origin only
 * (so nothing it does leaves the origin), and framed only by the embed's `allowed_origins`
 * (`'none'` without any: then no page may frame it).
 */
export function embedPolicy(allowedOrigins: readonly string[]): string {
  const ancestors = allowedOrigins.length > 0 ? allowedOrigins.join(' ') : "'none'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}
