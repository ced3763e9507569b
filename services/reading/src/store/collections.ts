// Collection rows and their public form.
import { sql } from 'kysely';
import type { Trx } from '@bindery/platform';
import { SYSTEM_COLLECTIONS, type SystemCollection } from '../domain/system-collections';
import { t } from '../handlers/context';
import { iso, newId } from '../handlers/util';

// biome-ignore lint/suspicious/noExplicitAny: database rows, typed where they are read
type Row = Record<string, any>;

export function collectionOut(r: Row) {
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
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** Inserts one system collection for a user; returns its row (an existing one of that type is kept). */
export async function insertSystem(trx: Trx, user: string, c: SystemCollection, now: Date): Promise<Row | null> {
  const have = await t(trx).selectFrom('collections').select('id').where('user_id', '=', user).where('query_type', '=', c.query_type).executeTakeFirst();
  if (have) return null;
  // a custom collection may have taken the name since: the system one keeps its name, the custom one yields
  await t(trx)
    .updateTable('collections')
    .set({ name: sql<string>`name || ' (custom)'` })
    .where('user_id', '=', user)
    .where('is_system', '=', false)
    .where(sql<boolean>`lower(name) = ${c.name.toLowerCase()}::text`)
    .execute();
  return t(trx)
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
}

export async function createSystemCollections(trx: Trx, user: string, now: Date): Promise<Row[]> {
  const out: Row[] = [];
  for (const c of SYSTEM_COLLECTIONS) {
    const r = await insertSystem(trx, user, c, now);
    if (r) out.push(r);
  }
  return out;
}
