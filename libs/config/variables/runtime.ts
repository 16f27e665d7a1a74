import type { Area } from '../variable.ts';
import { choice } from '../variable-kinds.ts';

/** `auto`: applied on the Node versions where the trick was measured to help; `on`/`off`: forced. */
const SWITCH = ['auto', 'on', 'off'] as const;

// libs/runtime/index.ts says why each trick exists and where it was measured.
export const CAIRN_RUNTIME_YOUNG_COLLECTION = choice({
  name: 'CAIRN_RUNTIME_YOUNG_COLLECTION',
  values: SWITCH,
  default: 'auto',
  shown: '`auto` (on every Node)',
  doc: "a young-generation collection after each request body over 64 KiB; sets V8's `--expose-gc`, so worker threads and `vm` contexts made after start-up see a `gc`",
});

export const CAIRN_RUNTIME_EXPRESS_MESSAGES = choice({
  name: 'CAIRN_RUNTIME_EXPRESS_MESSAGES',
  values: SWITCH,
  default: 'auto',
  shown: '`auto` (on Node 20, 22)',
  doc: "requests and responses born on Express's prototypes, so Express need not re-parent them per request",
});

export const RUNTIME: Area = {
  title: 'Runtime tuning',
  variables: [CAIRN_RUNTIME_YOUNG_COLLECTION, CAIRN_RUNTIME_EXPRESS_MESSAGES],
};
