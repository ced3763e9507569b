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

/** A collection as stored (the projection's row). */
export const collectionRow = (trx: Trx, id: string): Promise<Row> => t(trx).selectFrom('collections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/**
 * One system collection to make for a user (null when one of that type is kept), and the user's own
 * collections renamed to make way for its name: the rows to tell as `collection-saved` (the
 * renamed first), which the projection writes.
 */
export async function systemCollectionToMake(trx: Trx, user: string, c: SystemCollection, now: Date): Promise<{ row: Row | null; renamed: Row[] }> {
  const have = await t(trx).selectFrom('collections').select('id').where('user_id', '=', user).where('query_type', '=', c.query_type).executeTakeFirst();
  if (have) return { row: null, renamed: [] };
  // a custom collection may have taken the name since: the system one keeps its name, the custom one yields
  const taken = await t(trx)
    .selectFrom('collections')
    .selectAll()
    .where('user_id', '=', user)
    .where('is_system', '=', false)
    .where(sql<boolean>`lower(name) = ${c.name.toLowerCase()}::text`)
    .execute();
  const row: Row = {
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
    rules: null,
    auto_assign: null,
    created_at: now,
    updated_at: now,
  };
  return { row, renamed: taken.map((r) => ({ ...r, name: `${r.name} (custom)` })) };
}

/** The system collections a user lacks, and the user's own renamed to make way (see systemCollectionToMake). */
export async function systemCollectionsToMake(trx: Trx, user: string, now: Date): Promise<{ made: Row[]; renamed: Row[] }> {
  const made: Row[] = [];
  const renamed: Row[] = [];
  for (const c of SYSTEM_COLLECTIONS) {
    const r = await systemCollectionToMake(trx, user, c, now);
    if (r.row) made.push(r.row);
    renamed.push(...r.renamed);
  }
  return { made, renamed };
}
