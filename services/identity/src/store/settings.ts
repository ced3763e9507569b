import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);
type Value = string | number | boolean;

export async function storedSettings(q: DbOrTrx<IdentityDb>): Promise<Record<string, Value>> {
  const rows = await t(q).selectFrom('settings').select(['key', 'value']).execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export async function putSettings(q: DbOrTrx<IdentityDb>, changes: Record<string, Value>): Promise<void> {
  for (const [key, value] of Object.entries(changes)) {
    const v = JSON.stringify(value);
    await t(q)
      .insertInto('settings')
      .values({ key, value: v })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: v, updated_at: new Date() }))
      .execute();
  }
}

export async function config(q: DbOrTrx<IdentityDb>): Promise<Record<string, string>> {
  const rows = await t(q).selectFrom('config').select(['key', 'value']).orderBy('key').execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export async function putConfig(q: DbOrTrx<IdentityDb>, changes: Record<string, string | null>): Promise<void> {
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) await t(q).deleteFrom('config').where('key', '=', key).execute();
    else
      await t(q)
        .insertInto('config')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: new Date() }))
        .execute();
  }
}
