import { type Kysely, sql } from 'kysely';
import type { Database } from '../libs/storage/database.ts';

/** Business `bench`: task `root` and `count` tasks `dep-<i>` that each depend on it. */
export async function seedHub(db: Kysely<Database>, count: number): Promise<void> {
  await sql`insert into tasks (gid, business, name) values ('root', 'bench', 'root')`.execute(db);
  await sql`insert into tasks (gid, business, name)
    select 'dep-' || i, 'bench', 'dependent ' || i from generate_series(1, ${count}) as i`.execute(
    db,
  );
  await sql`insert into task_dependencies (task_gid, dependency_gid, business)
    select 'dep-' || i, 'root', 'bench' from generate_series(1, ${count}) as i order by i`.execute(
    db,
  );
}
