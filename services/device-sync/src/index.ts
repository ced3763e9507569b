export { deviceSyncService, type DeviceSyncOptions } from './main';
