// The scheduled backup's settings, from the identity read model (`iv_settings`): identity's registry
// keeps them (`backup_folder`, `backup_interval_hours`, `backup_keep`) and checks every value; a key
// never saved reads as the registry's default.
import { sql } from 'kysely';
import type { Db, NoTables } from '@bindery/platform';
import type { BackupSettings } from '../web-api/backup';
import { SCHEMA } from './migrations';
import { identityTables } from './tables';

/** the registry's defaults (services/identity/src/domain/settings.ts): no folder, daily, seven kept */
export const BACKUP_DEFAULTS: BackupSettings = { folder: '', intervalHours: 24, keep: 7 };

export async function backupSettings(db: Db<NoTables>): Promise<BackupSettings> {
  const t = identityTables();
  const { rows } = await sql<{ key: string; value: unknown }>`select key, value from ${sql.table(`${SCHEMA}.${t.settings}`)}
    where key in ('backup_folder', 'backup_interval_hours', 'backup_keep')`.execute(db);
  const v = Object.fromEntries(rows.map((r) => [r.key, r.value]));
  return {
    folder: typeof v.backup_folder === 'string' ? v.backup_folder : BACKUP_DEFAULTS.folder,
    intervalHours: typeof v.backup_interval_hours === 'number' ? v.backup_interval_hours : BACKUP_DEFAULTS.intervalHours,
    keep: typeof v.backup_keep === 'number' ? v.backup_keep : BACKUP_DEFAULTS.keep,
  };
}
