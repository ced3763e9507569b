// The library table.
import type { Catalog } from '@bindery/contracts';
import { toIso } from '@bindery/platform';
import { countActive } from './items';
import { SCHEMA } from './migrations';
import type { LibraryRow, Q } from './schema';

export type { LibraryRow };

const t = (q: Q) => q.withSchema(SCHEMA);

export async function findLibrary(q: Q, id: string, lock = false): Promise<LibraryRow | undefined> {
  let s = t(q).selectFrom('libraries').selectAll().where('id', '=', id);
  // no key update: an item inserted meanwhile (its foreign key takes a key share) is not blocked
  if (lock) s = s.forNoKeyUpdate();
  return await s.executeTakeFirst();
}

export async function allLibraries(q: Q): Promise<LibraryRow[]> {
  return await t(q).selectFrom('libraries').selectAll().orderBy('name').orderBy('id').execute();
}

export async function nameTaken(q: Q, name: string, exceptId?: string): Promise<boolean> {
  let s = t(q)
    .selectFrom('libraries')
    .select('id')
    .where((eb) => eb.fn('lower', ['name']), '=', name.toLowerCase());
  if (exceptId) s = s.where('id', '!=', exceptId);
  return (await s.executeTakeFirst()) !== undefined;
}

export function toPublicLibrary(r: LibraryRow, itemCount: number): Catalog.Library {
  return {
    id: r.id,
    name: r.name,
    folders: r.folders,
    watch: r.watch,
    created_by_admin: r.created_by_admin,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
    last_scan_at: r.last_scan_at ? toIso(r.last_scan_at) : null,
    item_count: itemCount,
  };
}

export async function publicLibraries(q: Q, rows: LibraryRow[]): Promise<Catalog.Library[]> {
  const counts = await countActive(
    q,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toPublicLibrary(r, counts.get(r.id) ?? 0));
}
