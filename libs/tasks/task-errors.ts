import { AppError } from '../http/errors.ts';

/*
 * What the task domain refuses, said in its own terms: a member of an update, a listed
 * dependency, the bound on a walk. Where that sits in a request (`['body', 'business']`,
 * `dependencies[2]`) only the routes know, and they place it (task.routes.ts,
 * dependency.routes.ts).
 */

/** An update refused as a whole (`member` undefined) or for one of its members. */
export class UpdateRefused extends Error {
  override name = 'UpdateRefused';
  readonly member: string | undefined;
  constructor(message: string, member?: string) {
    super(message);
    this.member = member;
  }
}

/** Listed dependencies the caller cannot see: a 404, as any object outside its token. */
export class UnknownDependencies extends AppError {
  override name = 'UnknownDependencies';
  readonly gids: readonly string[];
  constructor(gids: readonly string[]) {
    super('not_found', `Task ${gids.join(', ')} does not exist.`);
    this.gids = gids;
  }
}

/** Listed dependencies no edge may reach (the task itself, another business's), each with why. */
export class DependenciesRefused extends Error {
  override name = 'DependenciesRefused';
  readonly reasons: ReadonlyMap<string, string>;
  constructor(reasons: ReadonlyMap<string, string>) {
    super([...reasons.values()].join('; '));
    this.reasons = reasons;
  }
}

/** A `depth=all` listing that reaches more tasks than one walk may list. */
export class WalkTooLarge extends Error {
  override name = 'WalkTooLarge';
}

/** A graph read (critical path, bottlenecks) too large to finish within its bounded work. */
export class GraphTooLarge extends Error {
  override name = 'GraphTooLarge';
}
