import { type Selectable, sql } from 'kysely';
import { TOKEN_CHANNEL } from '../auth/token.repository.ts';
import type { Db } from '../storage/database.ts';
import type { BusinessErasuresTable, ProjectionHold } from './erasure.tables.ts';

export type ErasureRow = Selectable<BusinessErasuresTable>;

export async function findErasure(db: Db, business: string): Promise<ErasureRow | undefined> {
  return db
    .selectFrom('business_erasures')
    .selectAll()
    .where('business', '=', business)
    .executeTakeFirst();
}

export async function runningErasures(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('business_erasures')
    .select('business')
    .where('status', '=', 'running')
    .orderBy('started_at')
    .execute();
  return rows.map((row) => row.business);
}

/** Whether Postgres holds anything of the business: a task, a fact or a token naming it. */
export async function businessInPostgres(db: Db, business: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    select exists (select 1 from tasks where business = ${business})
      or exists (select 1 from api_tokens where ${business} = any(businesses))
      or exists (select 1 from outbox where business = ${business}) as found`.execute(db);
  return Boolean(rows[0]?.found);
}

/**
 * Marks the business as being erased (first step, in the caller's transaction): from its commit
 * on, no projector batch reads the business's facts and no write of it commits (the trigger of
 * 0013_business_erasures.sql). The projectors' checkpoints are locked meanwhile, so a batch is
 * either fixed before the mark (and held: see `ProjectionHold`) or reads after it. A finished
 * erasure starts again (something of the business was written since); a running one is left be.
 */
export async function markErasure(
  trx: Db,
  business: string,
  firstStep: string,
  now: Date,
): Promise<void> {
  const pending = await trx
    .selectFrom('projector_checkpoints')
    .select(['name', 'pending_xid', 'pending_id'])
    .orderBy('name')
    .forUpdate()
    .execute();
  const holds: ProjectionHold[] = pending.flatMap((row) =>
    row.pending_xid !== null && row.pending_id !== null
      ? [{ name: row.name, xid: String(row.pending_xid), id: Number(row.pending_id) }]
      : [],
  );
  const fresh = {
    // A new run, a new id (logs and the change log name the run).
    id: sql<string>`gen_random_uuid()`,
    status: 'running' as const,
    step: firstStep,
    projection_holds: JSON.stringify(holds),
    tokens_revoked: 0,
    tasks_deleted: 0,
    facts_deleted: 0,
    started_at: now,
    updated_at: now,
    finished_at: null,
  };
  await trx
    .insertInto('business_erasures')
    .values({ business, ...fresh })
    .onConflict((conflict) =>
      conflict.column('business').doUpdateSet(fresh).where('business_erasures.status', '=', 'done'),
    )
    .execute();
}

/**
 * Records that the erasure has reached `step` (`done`: finished), adding `counts`. Only forward
 * in `order`: should two instances run the same erasure, the slower never moves it back.
 */
export async function saveStep(
  db: Db,
  business: string,
  step: string,
  now: Date,
  order: readonly string[],
  counts: Partial<Pick<ErasureRow, 'tokens_revoked' | 'tasks_deleted' | 'facts_deleted'>> = {},
): Promise<void> {
  await db
    .updateTable('business_erasures')
    .set({
      step,
      updated_at: now,
      ...(step === 'done' ? { status: 'done', finished_at: now } : {}),
      ...Object.fromEntries(
        Object.entries(counts).map(([column, added]) => [
          column,
          sql`${sql.ref(column)} + ${added ?? 0}`,
        ]),
      ),
    })
    .where('business', '=', business)
    .where('status', '=', 'running')
    .where(
      sql<boolean>`coalesce(array_position(${order}::text[], step), 0)
        <= array_position(${order}::text[], ${step}::text)`,
    )
    .execute();
}

/** What a token left with no business is called from then on: its name often named the business. */
export const ERASED_TOKEN_NAME = 'erased';

/**
 * Takes the business out of every token, revoked ones included; a live token left with none is
 * revoked, and any token left with none loses its name too (ERASED_TOKEN_NAME). Announced on
 * the revocation channel in the same statement, so every instance's token cache forgets what it
 * held, when and only if this commits. Returns the number of tokens revoked.
 */
export async function removeFromTokens(db: Db, business: string, now: Date): Promise<number> {
  const { rows } = await sql<{ revoked: string }>`
    with changed as (
      update api_tokens
      set businesses = array_remove(businesses, ${business}),
        revoked_at = case when cardinality(array_remove(businesses, ${business})) = 0
          then coalesce(revoked_at, ${now}) else revoked_at end,
        name = case when cardinality(array_remove(businesses, ${business})) = 0
          then ${ERASED_TOKEN_NAME} else name end
      where ${business} = any(businesses)
      returning id, (revoked_at = ${now}) as revoked
    )
    select count(*) filter (where revoked)::text as revoked,
      (select pg_notify(${TOKEN_CHANNEL}, 'erasure') where exists (select 1 from changed))
    from changed`.execute(db);
  return Number(rows[0]?.revoked ?? 0);
}

/**
 * Waits for every transaction that may have written the business before the mark: those still
 * running when this starts (the mark has committed by then; any transaction that takes its id
 * later runs the refusing trigger with the mark in sight). Polls, as the projector does.
 */
export async function olderWritesSettled(db: Db): Promise<() => Promise<boolean>> {
  const { rows } = await sql<{
    horizon: string;
  }>`select pg_snapshot_xmax(pg_current_snapshot())::text as horizon`.execute(db);
  const horizon = rows[0]?.horizon ?? '0';
  return async () => {
    const check = await sql<{ settled: boolean }>`
      select pg_snapshot_xmin(pg_current_snapshot()) >= ${horizon}::xid8 as settled`.execute(db);
    return Boolean(check.rows[0]?.settled);
  };
}

/** Deletes up to `limit` of the business's tasks (their edges go with them); returns how many. */
export async function deleteTaskSlice(db: Db, business: string, limit: number): Promise<number> {
  const result = await sql`
    delete from tasks where gid in (
      select gid from tasks where business = ${business} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Views reading the business (their embeds go with them); returns how many. */
export async function deleteViews(db: Db, business: string): Promise<number> {
  const result = await sql`delete from views where ${business} = any(businesses)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Edges naming the business that no task deletion reached (there should be none). */
export async function deleteStrayEdges(db: Db, business: string): Promise<void> {
  await db.deleteFrom('task_dependencies').where('business', '=', business).execute();
}

export async function outboxIdRange(db: Db): Promise<{ min: number; max: number } | null> {
  const { rows } = await sql<{ min: string | null; max: string | null }>`
    select min(id)::text as min, max(id)::text as max from outbox`.execute(db);
  const row = rows[0];
  if (!row || row.min === null || row.max === null) return null;
  return { min: Number(row.min), max: Number(row.max) };
}

/**
 * Deletes the business's facts with ids in (after, upTo]: the outbox has no index on business,
 * so it is walked by id range, each slice read once, rather than searched again per batch.
 */
export async function deleteOutboxSlice(
  db: Db,
  business: string,
  after: number,
  upTo: number,
): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('id', '>', after)
    .where('id', '<=', upTo)
    .where('business', '=', business)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Idempotency records whose kept answer names the business anywhere (a task, a query's resolved
 * business or its rows, a token's businesses), and every kept query answer given for all of a
 * caller's businesses at once (it may have counted this one; a query is only read again when its
 * key is replayed). Sealed answers (the master key's) are left to the caller, who holds the key.
 */
export async function deleteIdempotencyRecords(db: Db, business: string): Promise<number> {
  const vars = sql`jsonb_build_object('b', ${business}::text)`;
  const result = await sql`
    delete from idempotency_keys
    where response_body is not null and response_body not like 'sealed:%'
      and (jsonb_path_exists(response_body::jsonb, '$.**.business ? (@ == $b)', ${vars})
        or jsonb_path_exists(response_body::jsonb, '$.**.businesses ? (@ == $b)', ${vars})
        or (read_seq is not null
          and jsonb_path_exists(response_body::jsonb, '$.metadata.query ? (@.business == null)')))`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}

export async function sealedMasterRecords(
  db: Db,
): Promise<Array<{ key: string; response_body: string }>> {
  const rows = await db
    .selectFrom('idempotency_keys')
    .select(['key', 'response_body'])
    .where('principal', '=', 'master')
    .where('response_body', 'like', 'sealed:%')
    .execute();
  return rows.flatMap((row) =>
    row.response_body === null ? [] : [{ key: row.key, response_body: row.response_body }],
  );
}

export async function deleteMasterRecord(db: Db, key: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('principal', '=', 'master')
    .where('key', '=', key)
    .execute();
}

/** Whether a projector's cursor has passed the batch it had fixed at the mark (or it is gone). */
export async function holdPassed(db: Db, hold: ProjectionHold): Promise<boolean> {
  const { rows } = await sql<{ passed: boolean }>`
    select (cursor_xid, cursor_id) >= (${hold.xid}::xid8, ${hold.id}::bigint) as passed
    from projector_checkpoints where name = ${hold.name}`.execute(db);
  return rows[0] === undefined || Boolean(rows[0].passed);
}

/** The tables an erasure deletes or rewrites rows of. */
const ERASED_TABLES = [
  'tasks',
  'task_dependencies',
  'outbox',
  'idempotency_keys',
  'api_tokens',
  'projection_changes',
  'business_erasures',
] as const;

/**
 * VACUUM of the tables the erasure touched (the deleted rows' versions and their index entries
 * are gone then, and their space is free to be written over), then a CHECKPOINT, after which
 * the write-ahead log holding them can be recycled. Each a statement of its own: VACUUM cannot
 * run in a transaction. CHECKPOINT needs a superuser or the pg_checkpoint role; without it the
 * log is recycled at the server's own next checkpoint (`checkpoint_timeout`, 5 minutes by
 * default), so a refusal is passed over.
 */
export async function vacuumErasedTables(db: Db): Promise<void> {
  await sql`vacuum ${sql.join(ERASED_TABLES.map((table) => sql.table(table)))}`.execute(db);
  try {
    await sql`checkpoint`.execute(db);
  } catch (error) {
    if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw error;
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';
