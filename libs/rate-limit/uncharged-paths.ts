/**
 * Probes and scrapes are reported but not charged: an orchestrator or Prometheus polling from
 * one address must not eat that address's anonymous budget, nor be refused and then kill a
 * healthy instance.
 */
const UNCHARGED_PATHS = new Set(['/', '/healthz', '/readyz', '/metrics', '/docs', '/explore']);
/**
 * The browser pages' files are static and cached by hashed name: a page load fetches several
 * at once, which must not spend (or be refused by) an anonymous visitor's API budget.
 */
const UNCHARGED_PREFIXES = ['/docs/assets/', '/explore/assets/'];

/**
 * Paths served to anyone and charged to no budget. Nothing on them depends on who calls, so
 * they are not authenticated either: a token lookup there would let a flood of made-up tokens
 * reach the database without ever meeting a rate limit.
 */
export const isUncharged = (path: string): boolean =>
  UNCHARGED_PATHS.has(path) || UNCHARGED_PREFIXES.some((prefix) => path.startsWith(prefix));
