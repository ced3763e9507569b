// Settings and configuration as stored: projections of `settings-changed` / `config-changed` (store/projection.ts).
import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);
type Value = string | number | boolean;

export async function storedSettings(q: DbOrTrx<IdentityDb>): Promise<Record<string, Value>> {
  const rows = await t(q).selectFrom('settings').select(['key', 'value']).execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export async function config(q: DbOrTrx<IdentityDb>): Promise<Record<string, string>> {
  const rows = await t(q).selectFrom('config').select(['key', 'value']).orderBy('key').execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}
