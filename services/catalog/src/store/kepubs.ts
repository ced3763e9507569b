// KEPUBs made for Kobos, keyed by the SHA-256 of the EPUB they were made from: a pure function of the
// file's bytes (like covers and locator indexes), so a changed file is simply a new key and no event
// is needed; the span map travels with the file to whoever maps Kobo Locations.
import { sql } from 'kysely';

import { SCHEMA } from './migrations';
import type { Q } from './schema';

export interface StoredKepub {
  data: Buffer;
  spans: Buffer;
  v: number;
}

export async function loadKepub(q: Q, sha256: string, v: number): Promise<StoredKepub | null> {
  const r = await q.withSchema(SCHEMA).selectFrom('kepubs').select(['data', 'spans', 'v']).where('sha256', '=', sha256).where('v', '>=', v).executeTakeFirst();
  return r ? { data: Buffer.from(r.data), spans: Buffer.from(r.spans), v: r.v } : null;
}

/** Drops KEPUBs no present file has any more (a file changed or went): what a Kobo asks for next is made anew. */
export async function purgeStaleKepubs(q: Q): Promise<number> {
  const r = await sql`
    delete from ${sql.table(`${SCHEMA}.kepubs`)} k
    where not exists (select 1 from ${sql.table(`${SCHEMA}.media_formats`)} f where f.sha256 = k.sha256 and f.present)`.execute(q);
  return Number(r.numAffectedRows ?? 0);
}

export async function saveKepub(q: Q, sha256: string, k: StoredKepub): Promise<void> {
  await q
    .withSchema(SCHEMA)
    .insertInto('kepubs')
    .values({ sha256, data: k.data, spans: k.spans, bytes: k.data.length, v: k.v })
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ data: sql`excluded.data`, spans: sql`excluded.spans`, bytes: sql`excluded.bytes`, v: sql`excluded.v` }))
    .execute();
}
