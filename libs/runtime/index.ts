/**
 * Runtime tuning: process-wide tricks that change how Node and V8 run Cairn, kept out of the
 * HTTP kernel (libs/http only emits hooks such as `onLargeBody`) and applied once at start-up
 * from apps/server (runtime-tuning.ts). One file per trick; each has a config switch whose
 * `auto` (the default) applies it only on the Node versions where it was measured to help, and
 * `on` / `off` force it. `npm run cycles` keeps libs/ from importing this folder.
 *
 * young-collection.ts — CAIRN_RUNTIME_YOUNG_COLLECTION (auto: every Node version, 20 to 24)
 *   Large bodies leave off-heap buffers behind that only old-generation marking would free; a
 *   young collection after each body over 64 KiB hands them back. Cost: `--expose-gc`.
 *   Figures: docs/benchmarks.md, "Runtime tuning".
 *
 * express-messages.ts — CAIRN_RUNTIME_EXPRESS_MESSAGES (auto: Node 20 and 22)
 *   Express re-parents each request and response, which on Node 20 and 22 costs V8 its fast
 *   paths; objects born on the app's prototypes keep them. Node 24 keeps them either way.
 *   Figures: docs/benchmarks.md, "Runtime tuning".
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
