// Library access inside the reading service, for lists and bulk operations: an item is visible
// when the caller may see its library (the gateway passes the caller's access with the request).
import { sql, type RawBuilder } from 'kysely';
import type { Access } from './util';

/** SQL: the item id in `col` belongs to a library the caller may see, and is still in the catalog. */
export function itemVisible(access: Access | undefined, col = 'item_id'): RawBuilder<boolean> {
  if (!access || access.all) return sql<boolean>`exists (select 1 from reading.items vi where vi.id = ${sql.ref(col)} and vi.removed_at is null)`;
  if (access.ids.length === 0) return sql<boolean>`false`;
  return sql<boolean>`exists (select 1 from reading.items vi where vi.id = ${sql.ref(col)} and vi.removed_at is null and vi.library_id in (${sql.join(access.ids)}))`;
}
