export { deviceSyncService, type DeviceSyncOptions } from './main';
// the fold of its log into its tables, for the replay test and a rebuild
export { projectDeviceSync, PROJECTED_TABLES } from './store/projection';
export { migrations, SCHEMA } from './store/migrations';
export type { DeviceSyncDb } from './store/db';
