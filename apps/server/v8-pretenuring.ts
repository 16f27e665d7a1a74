import v8 from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring for the server process; imported first by
 * `cairn.ts`, so it is set before any statement runs.
 *
 * On Node 20 and 22 (V8 11.3, 12.4) the heuristic misfires on `pg`'s result rows: it decides
 * that the sites allocating a result's arrays should allocate in the old generation, and from
 * then on every row of every result is reachable from a dead old-generation array until the
 * next full collection, so each young-generation collection copies and promotes about a fifth
 * of what a page of dependents allocated (`--trace-gc-nvp`: `promoted` 2.2 MB of every 11 MB allocated,
 * 0 with this flag). On Node 24 about a quarter of such rows is promoted with the flag or
 * without it, for a reason the flag does not touch; there it changes nothing.
 * `npm run bench -- dependents` and test/v8-pretenuring.test.ts show the difference.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
