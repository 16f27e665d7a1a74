import type { Transaction } from 'kysely';
import type { Principal } from '../../libs/auth/principal.ts';
import type { Database } from '../../libs/storage/database.ts';
import { addDependencies, removeDependency } from '../../libs/tasks/dependency.service.ts';
import { createTask, type TaskDeps, updateTask } from '../../libs/tasks/task.service.ts';
import type { TaskStatus } from '../../libs/tasks/task-status.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';

/** Three businesses with their projects; every task goes through the write side. */
export const DEMO_BUSINESSES: Record<string, string[]> = {
  acme: ['website', 'mobile-app', 'billing'],
  globex: ['onboarding', 'data-platform', 'security'],
  initech: ['tps-reports', 'migration'],
};
const ASSIGNEES = ['ana', 'ben', 'chen', 'dara', 'eli', 'fay', null];
const VERBS = ['Draft', 'Review', 'Ship', 'Test', 'Design', 'Fix', 'Document', 'Plan'];
const NOUNS = ['login flow', 'invoice export', 'search', 'audit log', 'pricing page', 'backups'];
const TASKS_PER_PROJECT = 15;
export const HISTORY_DAYS = 120;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// The demo writes as the master principal: it may touch every business.
const SYSTEM: Principal = { kind: 'master' };

export interface DemoSummary {
  businesses: string[];
  projects: number;
  assignees: number;
  tasks: number;
  edges: number;
  /** The task with the most dependents, for the printed `dependents` example. */
  busiestDependency: { gid: string; business: string; dependents: number };
}

/** A seeded generator, so every fresh data directory gets the same shape of history. */
export function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Plan {
  business: string;
  project: string;
  name: string;
  assignee: string | null;
  createdAt: Date;
  /** Most tasks have a due date, a few to three weeks out; open ones past it count as overdue. */
  dueOn: string | null;
  /** Earlier tasks of the same project, so the graph never has a cycle. */
  dependsOn: Plan[];
  /** Later status changes: [status, when]. */
  changes: Array<[TaskStatus, Date]>;
  /** Filled in once written. */
  gid: string;
  dependents: number;
}

function plan(now: Date): Plan[] {
  const rand = random(7);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const plans: Plan[] = [];
  for (const [business, projects] of Object.entries(DEMO_BUSINESSES)) {
    for (const project of projects) {
      const earlierInProject: Plan[] = [];
      const times = Array.from({ length: TASKS_PER_PROJECT }, () =>
        Math.floor(now.getTime() - HISTORY_DAYS * DAY + rand() * (HISTORY_DAYS * DAY - HOUR)),
      ).sort((a, b) => a - b);
      for (const time of times) {
        const createdAt = new Date(time);
        const recent = earlierInProject.slice(-4).reverse();
        const dependsOn = recent.filter((_, k) => k === 0 || rand() < 0.3);
        const age = now.getTime() - time;
        const changes: Array<[TaskStatus, Date]> = [];
        const at = (offset: number) => new Date(Math.min(time + offset, now.getTime() - 60_000));
        const started = at(HOUR + rand() * 2 * DAY);
        const roll = rand();
        if (roll < (age > 14 * DAY ? 0.75 : 0.3)) {
          changes.push(['in_progress', started]);
          changes.push(['completed', at(started.getTime() - time + rand() * 20 * DAY)]);
        } else if (roll < 0.83) {
          changes.push(['in_progress', started]);
        } else if (roll < 0.9) {
          changes.push(['cancelled', started]);
        }
        const task: Plan = {
          business,
          project,
          name: `${pick(VERBS)} ${pick(NOUNS)}`,
          assignee: pick(ASSIGNEES),
          createdAt,
          dueOn:
            rand() < 0.8
              ? new Date(time + (2 + Math.floor(rand() * 20)) * DAY).toISOString().slice(0, 10)
              : null,
          dependsOn,
          changes,
          gid: '',
          dependents: 0,
        };
        plans.push(task);
        earlierInProject.push(task);
      }
    }
  }
  return plans;
}

/**
 * Writes months of backdated history through the ordinary use cases, with a clock set to the
 * moment each change "happened": Postgres holds the tasks and edges, and the outbox holds facts
 * with those past times for the projector to carry into ClickHouse. Every change is written in
 * the order it happened, as live writes are: whether a change blocks or unblocks other tasks
 * depends on their state at that moment.
 */
export async function loadDemoDataset(deps: TaskDeps, now: Date): Promise<DemoSummary> {
  const plans = plan(now);
  const write = <T>(work: (trx: Transaction<Database>) => Promise<T>) => inTaskUnit(deps, work);
  // Plans change: every seventh task with several dependencies later drops its oldest one.
  const rewired = new Map(
    plans
      .filter((task) => task.dependsOn.length > 1)
      .filter((_, k) => k % 7 === 0)
      .map((task) => [task, task.dependsOn.at(-1) as Plan]),
  );
  const steps: Array<{ at: number; run: () => Promise<unknown> }> = [];
  for (const task of plans) {
    const created = task.createdAt.getTime();
    steps.push({
      at: created,
      run: async () => {
        const row = await write((trx) =>
          createTask(
            trx,
            {
              business: task.business,
              name: task.name,
              project: task.project,
              assignee: task.assignee,
              due_on: task.dueOn,
            },
            task.createdAt,
          ),
        );
        task.gid = row.gid;
      },
    });
    if (task.dependsOn.length > 0) {
      const linkedAt = new Date(created + 60_000);
      steps.push({
        at: linkedAt.getTime(),
        run: () =>
          write((trx) =>
            addDependencies(
              trx,
              task.gid,
              task.dependsOn.map((dependency) => dependency.gid),
              SYSTEM,
              linkedAt,
            ),
          ),
      });
    }
    for (const [status, when] of task.changes) {
      steps.push({
        at: when.getTime(),
        run: () => write((trx) => updateTask(trx, task.gid, { status }, SYSTEM, when)),
      });
    }
    const dropped = rewired.get(task);
    if (dropped) {
      const when = new Date(Math.min(created + 3 * DAY, now.getTime() - 60_000));
      steps.push({
        at: when.getTime(),
        run: () => write((trx) => removeDependency(trx, task.gid, dropped.gid, SYSTEM, when)),
      });
    }
  }
  // A stable sort: steps of one instant keep the order above (create, link, change, drop).
  for (const step of steps.sort((a, b) => a.at - b.at)) await step.run();
  let edges = 0;
  for (const task of plans) {
    const dropped = rewired.get(task);
    for (const dependency of task.dependsOn) {
      if (dependency === dropped) continue;
      edges += 1;
      dependency.dependents += 1;
    }
  }
  const busiest = plans.reduce((best, task) => (task.dependents > best.dependents ? task : best));
  return {
    businesses: Object.keys(DEMO_BUSINESSES),
    projects: Object.values(DEMO_BUSINESSES).flat().length,
    assignees: ASSIGNEES.filter(Boolean).length,
    tasks: plans.length,
    edges,
    busiestDependency: {
      gid: busiest.gid,
      business: busiest.business,
      dependents: busiest.dependents,
    },
  };
}
