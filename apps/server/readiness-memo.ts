/** How long one round of engine checks answers /readyz. */
export const READINESS_HOLD_MS = 1_000;

/**
 * `check`, asked at most once per `holdMs`: calls while it runs share its answer, and calls
 * within `holdMs` of its end get that answer too. /readyz answers anyone, unauthenticated and
 * uncharged: without this each call would ask every engine (a burst of 1,000 calls, 1,000
 * rounds), and a load balancer polling every second or so sees no difference. A check that
 * throws is not held.
 */
export function heldFor<T>(
  holdMs: number,
  check: () => Promise<T>,
  clock: () => number = () => performance.now(),
): () => Promise<T> {
  let held: { answer: Promise<T>; until: number } | undefined;
  return () => {
    if (held && clock() < held.until) return held.answer;
    const entry = { answer: check(), until: Number.POSITIVE_INFINITY };
    held = entry;
    entry.answer.then(
      () => {
        entry.until = clock() + holdMs;
      },
      () => {
        if (held === entry) held = undefined;
      },
    );
    return entry.answer;
  };
}
