/**
 * Runtime tuning: process-wide tricks that change how Node and V8 run Cairn, kept out of the
 * HTTP kernel (libs/http only emits hooks such as `onLargeBody`) and applied once at start-up
 * from apps/server (runtime-tuning.ts). One file per trick; each has a config switch whose
 * `auto` (the default) applies it only on the Node versions where it was measured to help, and
 * `on` / `off` force it. `npm run cycles` keeps libs/ from importing this folder.
 *
 * young-collection.ts — CAIRN_RUNTIME_YOUNG_COLLECTION (auto: every Node version, 20 to 24)
 *   Cause: Node's HTTP parser copies a large body's socket reads into buffers outside the heap
 *   whose handles are small, so at a few dozen bodies a second they pile up until V8 runs
 *   old-generation marking every few hundred milliseconds on the event loop. A young collection
 *   after each body over 64 KiB hands them back.
 *   Measured: `npm run bench -- abuse --seconds 10 --clients 4` (docs/benchmarks.md, "Hostile
 *   bodies"), Node 20: /healthz p99 loaded/idle 2.02–3.00× without, 1.04–1.96× with (eight runs
 *   each); 3 full collections in 10 s of load instead of 29. Node 22 is taken to behave as 20
 *   (not measured).
 *   Cost: sets `--expose-gc`, so every `vm` context and worker thread made afterwards (the
 *   body-check workers included) has a global `gc`.
 *   Node 24.21, same bench, off/on/off/on on a busy shared VM (idle p99 26–83 ms, so the p99
 *   ratios are noise): bad bodies answered in 10 s 61, 63 off against 82, 84 on; /healthz
 *   probes answered under load 302, 257 off against 307, 349 on; loaded p99 73, 259 ms off
 *   against 96, 59 ms on. It helps there too, so `auto` applies it on 24 as well.
 *
 * express-messages.ts — CAIRN_RUNTIME_EXPRESS_MESSAGES (auto: Node 20 and 22)
 *   Cause: Express re-parents Node's request and response with `Object.setPrototypeOf` on every
 *   request, which on Node 20 and 22 drops V8's fast paths for them (the response becomes a
 *   dictionary-mode object). Objects born on the app's prototypes keep them.
 *   Measured: `npm run bench -- express-messages --rounds 4 --seconds 3` (bare Express, empty
 *   route, server CPU per request, four rounds each, on a shared 2-core VM): Node 20.20 287–473 µs
 *   without, 100–129 µs with (one round 312); Node 24.21 124–180 µs without, 110–153 µs with,
 *   no gain beyond the spread, and an earlier measure of Cairn's empty route there found it
 *   slower (70–83 → 90–116 µs). Node 24 keeps the objects fast without it, so `auto` leaves it
 *   off there. Node 22: the earlier Node 20 and 22 measures (about 250 → 80–100 µs).
 */

/** `auto`: on the Node versions the trick helps; `on` / `off`: whatever the version. */
export type RuntimeSwitch = 'auto' | 'on' | 'off';

export interface RuntimeTrick {
  /** The environment variable that switches it (libs/config/config.ts). */
  readonly variable: string;
  /** Whether it was measured to help on this major version of Node. */
  helps(nodeMajor: number): boolean;
}

export const RUNTIME_TRICKS = {
  youngCollection: {
    variable: 'CAIRN_RUNTIME_YOUNG_COLLECTION',
    helps: (_major: number) => true,
  },
  expressMessages: {
    variable: 'CAIRN_RUNTIME_EXPRESS_MESSAGES',
    helps: (major: number) => major < 24,
  },
} as const satisfies Record<string, RuntimeTrick>;

export type TrickName = keyof typeof RUNTIME_TRICKS;

/** The running Node's major version. */
export const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** Which tricks to apply, from their switches and the Node version. */
export function tricksToApply(
  switches: Readonly<Record<TrickName, RuntimeSwitch>>,
  nodeMajor: number = NODE_MAJOR,
): Record<TrickName, boolean> {
  const decide = (name: TrickName) =>
    switches[name] === 'auto' ? RUNTIME_TRICKS[name].helps(nodeMajor) : switches[name] === 'on';
  return { youngCollection: decide('youngCollection'), expressMessages: decide('expressMessages') };
}
