// Collection rows and their public form.
import { sql } from 'kysely';
import type { Reading } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { CollectionsTable, Trx } from './db';
import { SYSTEM_COLLECTIONS, type SystemCollection } from '../domain/system-collections';
import { t } from '../handlers/context';
import { newId } from '../handlers/util';

type Row = Selectable<CollectionsTable>;

export function collectionOut(r: Row): Reading.CollectionRecord {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    query_type: r.query_type ?? null,
    is_system: Boolean(r.is_system),
    is_smart: r.rules != null,
    priority: Number(r.priority),
    color: r.color ?? null,
    icon: r.icon ?? null,
    show_on_dashboard: Boolean(r.show_on_dashboard),
    rules: r.rules ?? null,
    auto_assign: r.auto_assign ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/**
 * Inserts one system collection for a user: its row (null when one of that type is kept), and the
 * user's own collections renamed to make way for its name (each to be told as a `collection-saved`).
 */
export async function insertSystem(trx: Trx, user: string, c: SystemCollection, now: Date): Promise<{ row: Row | null; renamed: Row[] }> {
  const have = await t(trx).selectFrom('collections').select('id').where('user_id', '=', user).where('query_type', '=', c.query_type).executeTakeFirst();
  if (have) return { row: null, renamed: [] };
  // a custom collection may have taken the name since: the system one keeps its name, the custom one yields
  const renamed = await t(trx)
    .updateTable('collections')
    .set({ name: sql<string>`name || ' (custom)'` })
    .where('user_id', '=', user)
    .where('is_system', '=', false)
    .where(sql<boolean>`lower(name) = ${c.name.toLowerCase()}::text`)
    .returningAll()
    .execute();
  const row = await t(trx)
    .insertInto('collections')
    .values({
      id: newId(),
      user_id: user,
      name: c.name,
      description: '',
      query_type: c.query_type,
      is_system: true,
      priority: c.priority,
      color: c.color,
      icon: c.icon,
      show_on_dashboard: true,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, renamed };
}

export async function createSystemCollections(trx: Trx, user: string, now: Date): Promise<{ made: Row[]; renamed: Row[] }> {
  const made: Row[] = [];
  const renamed: Row[] = [];
  for (const c of SYSTEM_COLLECTIONS) {
    const r = await insertSystem(trx, user, c, now);
    if (r.row) made.push(r.row);
    renamed.push(...r.renamed);
  }
  return { made, renamed };
}
