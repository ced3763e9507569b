// Locator indexes, stored gzipped and keyed by the SHA-256 of the file they describe: an index is a
// pure function of the file's bytes, so items sharing content share one row and the item's event
// (its formats' SHA-256) already names the index that belongs to it.
import { promisify } from 'node:util';
import { gzip, gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import type * as Locator from '@bindery/locator';
import { SCHEMA } from './migrations';
import type { Q } from './schema';

const zip = promisify(gzip);

/** The index format this code makes; a stored row of an older one is made again when it is asked for. */
export const LOCATOR_VERSION = 2;

export async function saveLocatorIndexes(q: Q, list: { sha256: string; index: Locator.LocatorIndex }[]): Promise<void> {
  if (list.length === 0) return;
  const seen = new Set<string>();
  const rows = [];
  for (const { sha256, index } of list) {
    if (seen.has(sha256)) continue;
    seen.add(sha256);
    const json = JSON.stringify(index);
    rows.push({ sha256, data: list.length > 8 ? gzipSync(json) : await zip(json), bytes: json.length, v: index.v });
  }
  await q
    .withSchema(SCHEMA)
    .insertInto('locator_indexes')
    .values(rows)
    .onConflict((oc) =>
      oc.column('sha256').doUpdateSet({ data: sql`excluded.data`, bytes: sql`excluded.bytes`, v: sql`excluded.v` }).where('locator_indexes.v', '<', sql<number>`excluded.v`),
    )
    .execute();
}

/** The stored index, gzipped JSON (what the locator-index reply carries, base64); null when absent or of an older format. */
export async function loadLocatorIndexGz(q: Q, sha256: string): Promise<Buffer | null> {
  const r = await q.withSchema(SCHEMA).selectFrom('locator_indexes').select('data').where('sha256', '=', sha256).where('v', '>=', LOCATOR_VERSION).executeTakeFirst();
  return r ? Buffer.from(r.data) : null;
}

/** Whether an index of the current format is stored (without loading it). */
export async function hasLocatorIndex(q: Q, sha256: string): Promise<boolean> {
  const r = await q.withSchema(SCHEMA).selectFrom('locator_indexes').select('v').where('sha256', '=', sha256).where('v', '>=', LOCATOR_VERSION).executeTakeFirst();
  return r !== undefined;
}
