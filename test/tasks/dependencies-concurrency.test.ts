import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../libs/auth/principal.ts';
import { AppError } from '../../libs/http/errors.ts';
import type { Postgres } from '../../libs/storage/postgres.ts';
import {
  addDependencies,
  type DependencyDeps,
  edgeCursorPosition,
  listEdges,
  removeDependency,
} from '../../libs/tasks/dependency.service.ts';
import { createTask } from '../../libs/tasks/task.service.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';
import { openGraphStore } from '../support/graph-store.ts';

const principal: Principal = {
  kind: 'token',
  id: 'tok_test',
  tokenKind: 'user',
  scopes: ['workflows:read', 'workflows:write'],
  businesses: ['acme'],
};

// True concurrency needs the Postgres server (many sessions); PGlite is one session, so there
// the same scenarios run interleaved at every await.
describe.each(['postgres', 'pglite'] as const)(
  'dependency graph under concurrency on %s',
  (engine) => {
    let store: Awaited<ReturnType<typeof openGraphStore>>;
    let pg: Postgres;
    let deps: DependencyDeps;
    beforeAll(async () => {
      store = await openGraphStore(engine, { poolSize: 20, cursorKeyByte: 7 });
      ({ pg, deps } = store);
    });
    afterAll(() => store?.close());

    const task = async (name: string) =>
      (await inTaskUnit(deps, (trx) => createTask(trx, { business: 'acme', name }, deps.now())))
        .gid;
    const outcome = (settled: PromiseSettledResult<unknown>) => {
      if (settled.status === 'fulfilled') return 'ok';
      const error = settled.reason as AppError;
      expect(error).toBeInstanceOf(AppError);
      return error.code;
    };

    it('never lets two requests that together close a cycle both succeed', async () => {
      for (let round = 0; round < 15; round++) {
        const [a, b, c] = [await task('a'), await task('b'), await task('c')];
        const pair = await Promise.allSettled([
          inTaskUnit(deps, (trx) => addDependencies(trx, a, [b], principal, deps.now())),
          inTaskUnit(deps, (trx) => addDependencies(trx, b, [a], principal, deps.now())),
        ]);
        expect(pair.map(outcome).sort()).toEqual(['conflict', 'ok']);
        // Three tasks: a→b exists (or b→a); adding the other two legs at once must fail one.
        const [x, y] = pair[0]!.status === 'fulfilled' ? [a, b] : [b, a];
        const triangle = await Promise.allSettled([
          inTaskUnit(deps, (trx) => addDependencies(trx, y, [c], principal, deps.now())),
          inTaskUnit(deps, (trx) => addDependencies(trx, c, [x], principal, deps.now())),
        ]);
        expect(triangle.map(outcome).sort()).toEqual(['conflict', 'ok']);
      }
      const edges = await pg.db
        .selectFrom('task_dependencies')
        .select(['task_gid', 'dependency_gid'])
        .execute();
      expect(hasCycle(edges)).toBe(false);
    });

    it('walks every dependent that exists throughout exactly once while a writer adds and removes edges', async () => {
      const root = await task('root');
      const stable: string[] = [];
      for (let i = 0; i < 60; i++) stable.push(await task(`stable ${i}`));
      // Stable and churning dependents interleave, so removals happen inside pages being walked.
      const churn: string[] = [];
      for (let i = 0; i < 60; i++) {
        await inTaskUnit(deps, (trx) =>
          addDependencies(trx, stable[i]!, [root], principal, deps.now()),
        );
        const extra = await task(`churn ${i}`);
        await inTaskUnit(deps, (trx) => addDependencies(trx, extra, [root], principal, deps.now()));
        churn.push(extra);
      }
      let walking = true;
      const writer = (async () => {
        let i = 0;
        // Bounded, so the walk ends even if the writer outpaces it.
        while (walking && i < 150) {
          const victim = churn.splice(Math.floor(Math.random() * churn.length), 1)[0];
          if (victim)
            await inTaskUnit(deps, (trx) =>
              removeDependency(trx, victim, root, principal, deps.now()),
            );
          const extra = await task(`late ${i++}`);
          await inTaskUnit(deps, (trx) =>
            addDependencies(trx, extra, [root], principal, deps.now()),
          );
          churn.push(extra);
          // PGlite answers in microtasks: without a real pause the walker would never get in.
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return i;
      })();
      const seen: string[] = [];
      let offset: string | undefined;
      for (;;) {
        const afterId = edgeCursorPosition(deps, 'dependents', root, offset);
        const page = await listEdges(deps, 'dependents', root, { limit: 7, afterId }, principal);
        seen.push(...page.rows.map((row) => row.gid));
        // Let the writer in between pages.
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (!page.nextOffset) break;
        offset = page.nextOffset;
      }
      walking = false;
      const writes = await writer;
      expect(writes).toBeGreaterThan(0);
      expect(new Set(seen).size).toBe(seen.length);
      const counts = new Map<string, number>();
      for (const gid of seen) counts.set(gid, (counts.get(gid) ?? 0) + 1);
      for (const gid of stable) expect(counts.get(gid)).toBe(1);
    });
  },
);

function hasCycle(edges: Array<{ task_gid: string; dependency_gid: string }>): boolean {
  const next = new Map<string, string[]>();
  for (const edge of edges)
    next.set(edge.task_gid, [...(next.get(edge.task_gid) ?? []), edge.dependency_gid]);
  const state = new Map<string, 'open' | 'done'>();
  const visit = (start: string): boolean => {
    // Iterative DFS: the property test builds long chains.
    const stack: Array<[string, number]> = [[start, 0]];
    state.set(start, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const children = next.get(top[0]) ?? [];
      if (top[1] >= children.length) {
        state.set(top[0], 'done');
        stack.pop();
        continue;
      }
      const child = children[top[1]++]!;
      if (state.get(child) === 'open') return true;
      if (!state.has(child)) {
        state.set(child, 'open');
        stack.push([child, 0]);
      }
    }
    return false;
  };
  for (const node of next.keys()) if (!state.has(node) && visit(node)) return true;
  return false;
}
