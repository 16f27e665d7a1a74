import { type Selectable, sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { ViewEmbedsTable, ViewsTable } from './view.tables.ts';

export type ViewRow = Selectable<ViewsTable>;
export type EmbedRow = Selectable<ViewEmbedsTable>;

export interface NewView {
  id: string;
  name: string;
  query: Record<string, unknown>;
  businesses: string[];
  prometheus: boolean;
  at: Date;
}

export async function insertView(db: Db, view: NewView): Promise<ViewRow> {
  return db
    .insertInto('views')
    .values({
      id: view.id,
      name: view.name,
      query: JSON.stringify(view.query),
      businesses: view.businesses,
      prometheus: view.prometheus,
      created_at: view.at,
      updated_at: view.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findView(db: Db, id: string): Promise<ViewRow | undefined> {
  return db.selectFrom('views').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * One page of the views whose businesses all lie in `readable` (every view when null), oldest
 * first, with the count of all of them: `businesses <@ readable`, which the GIN index answers.
 */
export async function listViewPage(
  db: Db,
  readable: readonly string[] | null,
  page: { limit: number; offset: number },
): Promise<{ rows: ViewRow[]; total: number }> {
  const scoped = db
    .selectFrom('views')
    .$if(readable !== null, (qb) =>
      qb.where(sql<boolean>`businesses <@ ${sql.val([...(readable ?? [])])}::text[]`),
    );
  const { total } = await scoped
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  const rows = await scoped
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { rows, total: Number(total) };
}

export async function updateView(
  db: Db,
  id: string,
  change: Omit<NewView, 'id'>,
): Promise<ViewRow | undefined> {
  return db
    .updateTable('views')
    .set({
      name: change.name,
      query: JSON.stringify(change.query),
      businesses: change.businesses,
      prometheus: change.prometheus,
      updated_at: change.at,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Its embeds go with it (ON DELETE CASCADE). */
export async function deleteView(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('views').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertEmbed(db: Db, row: Omit<EmbedRow, 'revoked_at'>): Promise<EmbedRow> {
  return db
    .insertInto('view_embeds')
    .values({ ...row, locked_filters: JSON.stringify(row.locked_filters) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listEmbeds(db: Db, viewId: string): Promise<EmbedRow[]> {
  return db
    .selectFrom('view_embeds')
    .selectAll()
    .where('view_id', '=', viewId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** False when the view has no live embed of this id. */
export async function revokeEmbed(
  db: Db,
  viewId: string,
  embedId: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('view_embeds')
    .set({ revoked_at: now })
    .where('id', '=', embedId)
    .where('view_id', '=', viewId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The embed a token hash opens, with its view. */
export async function findEmbedByHash(
  db: Db,
  tokenHash: string,
): Promise<{ embed: EmbedRow; view: ViewRow } | undefined> {
  const embed = await db
    .selectFrom('view_embeds')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!embed) return undefined;
  const view = await findView(db, embed.view_id);
  return view ? { embed, view } : undefined;
}

/** The views served as gauges whose businesses all lie in `readable` (every one when null). */
export async function listGaugeViews(
  db: Db,
  readable: readonly string[] | null,
): Promise<ViewRow[]> {
  return db
    .selectFrom('views')
    .selectAll()
    .where('prometheus', '=', true)
    .$if(readable !== null, (qb) =>
      qb.where(sql<boolean>`businesses <@ ${sql.val([...(readable ?? [])])}::text[]`),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
