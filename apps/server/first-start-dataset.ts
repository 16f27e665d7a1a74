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
function random(seed: number): () => number {
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
 * with those past times for the projector to carry into ClickHouse.
 */
export async function loadDemoDataset(deps: TaskDeps, now: Date): Promise<DemoSummary> {
  const plans = plan(now);
  const write = <T>(work: (trx: Transaction<Database>) => Promise<T>) => inTaskUnit(deps, work);
  let edges = 0;
  const chronological = [...plans].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const task of chronological) {
    const created = await write((trx) =>
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
    task.gid = created.gid;
    if (task.dependsOn.length === 0) continue;
    const wanted = task.dependsOn.map((dependency) => dependency.gid);
    const linkedAt = new Date(task.createdAt.getTime() + 60_000);
    await write((trx) => addDependencies(trx, task.gid, wanted, SYSTEM, linkedAt));
    edges += wanted.length;
    for (const dependency of task.dependsOn) dependency.dependents += 1;
  }
  for (const task of plans) {
    for (const [status, when] of task.changes) {
      await write((trx) => updateTask(trx, task.gid, { status }, SYSTEM, when));
    }
  }
  // Plans change: every seventh task with several dependencies later drops its oldest one.
  const rewired = plans.filter((task) => task.dependsOn.length > 1).filter((_, k) => k % 7 === 0);
  for (const task of rewired) {
    const dropped = task.dependsOn.pop() as Plan;
    const when = new Date(Math.min(task.createdAt.getTime() + 3 * DAY, now.getTime() - 60_000));
    await write((trx) => removeDependency(trx, task.gid, dropped.gid, SYSTEM, when));
    edges -= 1;
    dropped.dependents -= 1;
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
