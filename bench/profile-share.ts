// Where a V8 CPU profile's time went within given windows of the monotonic clock: the share of
// the process's busy samples (idle left out) spent in Node's async hooks (what an entered
// AsyncLocalStorage costs every promise), in tracing code (the OpenTelemetry SDK and
// libs/tracing) and in the garbage collector. Shares of the process's own samples are what a
// busy shared machine blurs least: other work slows every sample alike.
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShares {
  /** Busy milliseconds sampled in the windows. */
  busyMs: number;
  asyncHooks: number;
  tracing: number;
  gc: number;
}

type Part = keyof Omit<ProfileShares, 'busyMs'> | 'idle' | 'other';

function partOf(frame: ProfileNode['callFrame']): Part {
  if (frame.functionName === '(idle)') return 'idle';
  if (frame.functionName === '(garbage collector)') return 'gc';
  if (frame.url === 'node:async_hooks' || frame.url === 'node:internal/async_hooks') {
    return 'asyncHooks';
  }
  if (frame.url.includes('/@opentelemetry/') || frame.url.includes('/libs/tracing/')) {
    return 'tracing';
  }
  return 'other';
}

/**
 * Self time by part within `windows` (microseconds of CLOCK_MONOTONIC, the clock V8 stamps
 * samples with and `process.hrtime` reads, so a window taken in another process lines up).
 */
export function profileShares(file: string, windows: Array<[number, number]>): ProfileShares {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const parts = new Map(profile.nodes.map((node) => [node.id, partOf(node.callFrame)]));
  const time = new Map<Part, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (!windows.some(([from, to]) => at >= from && at < to)) return;
    const part = parts.get(id) ?? 'other';
    time.set(part, (time.get(part) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const busy = [...time].reduce((sum, [part, us]) => (part === 'idle' ? sum : sum + us), 0);
  const share = (part: Part) => (busy > 0 ? (time.get(part) ?? 0) / busy : 0);
  return {
    busyMs: busy / 1000,
    asyncHooks: share('asyncHooks'),
    tracing: share('tracing'),
    gc: share('gc'),
  };
}

/** The monotonic clock in microseconds, as the profile's timestamps count it. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);
