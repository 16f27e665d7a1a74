import http from 'node:http';
import { httpCall } from './http-call.ts';

export interface TaskWriterOptions {
  url: string;
  /** A token with `workflows:write` for `businesses`. */
  token: string;
  businesses: string[];
  perSecond: number;
  /** Writes outstanding at most: past it a due write is skipped (and counted), not queued. */
  maxInFlight?: number;
}

export interface WriterFigures {
  /** Writes answered 2xx. */
  written: number;
  failed: number;
  /** Writes due while `maxInFlight` were outstanding: the service fell behind the rate. */
  skipped: number;
  seconds: number;
  lastFailure?: string;
}

interface Moving {
  gid: string;
  next: 'in_progress' | 'completed';
}

/**
 * Writes at a steady rate through the API, as a team working its tasks: one write in three
 * creates a task (open), the others move an earlier one on (in progress, then completed). The
 * rate is kept by the clock, not by the answers, so a slow service gets writes as it would.
 */
export function startTaskWriter(options: TaskWriterOptions): { stop(): Promise<WriterFigures> } {
  const maxInFlight = options.maxInFlight ?? 32;
  const agent = new http.Agent({ keepAlive: true, maxSockets: maxInFlight });
  const headers = {
    authorization: `Bearer ${options.token}`,
    'content-type': 'application/json',
  };
  const figures: WriterFigures = { written: 0, failed: 0, skipped: 0, seconds: 0 };
  const moving: Moving[] = [];
  const pending = new Set<Promise<void>>();
  let issued = 0;

  const write = async (n: number) => {
    const task = n % 3 === 0 ? undefined : moving.shift();
    const answer = task
      ? await httpCall(
          agent,
          'PUT',
          `${options.url}/api/v1/tasks/${task.gid}`,
          headers,
          JSON.stringify({ status: task.next }),
        )
      : await httpCall(
          agent,
          'POST',
          `${options.url}/api/v1/tasks`,
          headers,
          JSON.stringify({
            business: options.businesses[n % options.businesses.length],
            name: `refresh bench ${n}`,
            project: `project-${n % 12}`,
            assignee: `user-${n % 60}`,
            status: 'open',
          }),
        );
    if (answer.status >= 300) {
      figures.failed++;
      figures.lastFailure = `${answer.status} ${answer.body.slice(0, 200)}`;
      return;
    }
    figures.written++;
    if (!task) {
      const { gid } = (JSON.parse(answer.body) as { data: { gid: string } }).data;
      moving.push({ gid, next: 'in_progress' });
    } else if (task.next === 'in_progress') {
      moving.push({ gid: task.gid, next: 'completed' });
    }
  };

  const started = performance.now();
  const tick = setInterval(() => {
    const due = Math.floor(((performance.now() - started) * options.perSecond) / 1000);
    for (; issued < due; issued++) {
      if (pending.size >= maxInFlight) {
        figures.skipped++;
        continue;
      }
      const running: Promise<void> = write(issued)
        .catch((error: Error) => {
          figures.failed++;
          figures.lastFailure = error.message;
        })
        .finally(() => pending.delete(running));
      pending.add(running);
    }
  }, 5);

  return {
    async stop() {
      clearInterval(tick);
      figures.seconds = (performance.now() - started) / 1000;
      await Promise.all(pending);
      agent.destroy();
      return figures;
    },
  };
}
