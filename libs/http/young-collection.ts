import v8 from 'node:v8';
import vm from 'node:vm';

type Collect = (options: { type: 'minor'; execution: 'sync' }) => void;

let collect: Collect | null | undefined;
let scheduled = false;

/** V8's `gc`, from a context of its own so that nothing else in the process sees it. */
function collector(): Collect | null {
  if (collect === undefined) {
    try {
      // The flag exposes `gc` only to contexts created after it is set.
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as Collect;
    } catch {
      collect = null;
    }
  }
  return collect;
}

/**
 * Collects the young generation on the next turn of the event loop (once per turn at most).
 *
 * A large request body reaches JavaScript as the HTTP parser's copy of every socket read:
 * buffers outside the heap that only a collection gives back. Their handles are small, so the
 * young generation fills slowly, and at a few dozen large bodies a second the buffers pile up
 * until V8 counts them against the whole heap and starts a full mark-compact every few hundred
 * milliseconds, tens of milliseconds of marking on the event loop that every other caller waits
 * behind. A young collection right after such a body costs well under a millisecond and returns
 * its buffers at once. Without `gc` (a runtime that refuses the flag) this does nothing.
 */
export function collectYoungSoon(): void {
  if (scheduled) return;
  const run = collector();
  if (!run) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    run({ type: 'minor', execution: 'sync' });
  });
}
