import v8 from 'node:v8';
import vm from 'node:vm';

type Collect = (options: { type: 'minor'; execution: 'sync' }) => void;

/**
 * V8's `gc`, fetched from a fresh `vm` context. `--expose-gc` is a process-wide V8 flag and
 * cannot be confined: the main context (made before the flag) never gets a global `gc`, but
 * every context made after it does — each later `vm` context and each worker thread started
 * later, the body-check workers included (checked on Node 20.20 and 24.21). Nothing in Cairn
 * calls `gc` there, yet any code that probes `globalThis.gc` sees it, which is why this trick
 * has a switch (CAIRN_RUNTIME_YOUNG_COLLECTION=off leaves the flag alone). Undefined when the
 * runtime refuses the flag.
 */
function exposeGc(): Collect | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as Collect;
  } catch {
    return undefined;
  }
}

/**
 * Turns young-generation collection after large bodies on, at start-up (so every context made
 * afterwards sees the same flag, not only those made after the first large body), and returns
 * the hook to hand the kernel (`onLargeBody`): it collects the young generation on the next
 * turn of the event loop, once per turn at most. Undefined when `gc` cannot be had.
 *
 * A large request body reaches JavaScript as the HTTP parser's copy of every socket read:
 * buffers outside the heap that only a collection gives back. Their handles are small, so the
 * young generation fills slowly, and at a few dozen large bodies a second the buffers pile up
 * until V8 counts them against the whole heap and starts a full mark-compact every few hundred
 * milliseconds, tens of milliseconds of marking on the event loop that every other caller waits
 * behind. A young collection right after such a body costs well under a millisecond and returns
 * its buffers at once.
 */
export function startYoungCollection(): (() => void) | undefined {
  const collect = exposeGc();
  if (!collect) return undefined;
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      collect({ type: 'minor', execution: 'sync' });
    });
  };
}
